import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
});
afterAll(() => t.close());

const cardsOf = async (id: string, key = acme.key) =>
  (await t.api.get(`/api/v1/assets/${id}`, key)).json().asset.fuelCardNumbers;

describe('PATCH /assets/{id} fuelCardNumbers', () => {
  it('replaces the list; a card is one asset’s per organisation', async () => {
    const truck = await makeAsset(t, acme.key, { nickname: 'Truck', assetClass: 'on-road' });
    const van = await makeAsset(t, acme.key, { nickname: 'Van', assetClass: 'on-road' });
    expect(await cardsOf(truck)).toEqual([]);
    expect(
      (await t.api.patch(`/api/v1/assets/${truck}`, acme.key, { fuelCardNumbers: ['C-2', 'C-1'] })).statusCode,
    ).toBe(200);
    expect(await cardsOf(truck)).toEqual(['C-1', 'C-2']);
    const taken = await t.api.patch(`/api/v1/assets/${van}`, acme.key, { fuelCardNumbers: ['C-1'] });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ error: 'fuel_card_taken', cardNumbers: ['C-1'] });
    await t.api.patch(`/api/v1/assets/${truck}`, acme.key, { fuelCardNumbers: ['C-2'] });
    expect((await t.api.patch(`/api/v1/assets/${van}`, acme.key, { fuelCardNumbers: ['C-1'] })).statusCode).toBe(200);
    expect(await cardsOf(truck)).toEqual(['C-2']);
    // Another organisation may use the same card number.
    const theirs = await makeAsset(t, other.key, { nickname: 'Theirs' });
    expect((await t.api.patch(`/api/v1/assets/${theirs}`, other.key, { fuelCardNumbers: ['C-2'] })).statusCode).toBe(
      200,
    );
  });
});
