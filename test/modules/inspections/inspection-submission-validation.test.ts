import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { answers, makeForm, smallFormBody, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let formId: string;
let foreignAssetId: string;
let foreignFormId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  formId = await makeForm(t, acme.key);
  foreignAssetId = await makeAsset(t, other.key);
  foreignFormId = await makeForm(t, other.key);
});
afterAll(() => t.close());

describe('validation', () => {
  it('keys every item problem as results.<itemKey>, all at once', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: [
        { itemKey: 'brakes', value: 3 },
        { itemKey: 'tyre_psi', value: 'high' },
        { itemKey: 'remarks', value: 12 },
        { itemKey: 'photo', pass: true },
        { itemKey: 'ghost', pass: true },
        { itemKey: 'hours', value: -1 },
      ],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({
      'results.brakes': 'is a pass_fail item: answer with pass, not value',
      'results.lights': 'is required (pass_fail item "Lights")',
      'results.tyre_psi': 'value must be a number',
      'results.remarks': 'value must be text',
      'results.photo': 'is a photo item: answer with attachmentIds',
      'results.ghost': 'is not an item of this form (version 1)',
      'results.hours': 'value must be a meter reading between 0 and 1000000000',
    });
  });

  it('refuses an item answered twice', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: [...answers(), { itemKey: 'lights', pass: false }],
    });
    expect(res.json().fieldErrors).toEqual({ 'results.lights': 'is answered more than once' });
  });

  it('inspectedAt: not in the future beyond 5 minutes, not before the asset was added', async () => {
    const assetId = await makeAsset(t, acme.key);
    const future = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      inspectedAt: new Date(Date.now() + 3600_000).toISOString(),
      results: answers(),
    });
    expect(future.statusCode).toBe(422);
    expect(future.json().fieldErrors.inspectedAt).toBe('cannot be in the future');
    const skew = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      inspectedAt: new Date(Date.now() + 60_000).toISOString(),
      results: answers(),
    });
    expect(skew.statusCode).toBe(201);
    const past = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      inspectedAt: '2020-01-01T00:00:00Z',
      results: answers(),
    });
    expect(past.statusCode).toBe(422);
    expect(past.json().fieldErrors.inspectedAt).toMatch(/^is before the asset was added/);
  });

  it('a form limited to asset classes refuses another class', async () => {
    const truck = await makeAsset(t, acme.key, { assetClass: 'on-road' });
    const offRoad = await makeForm(t, acme.key, smallFormBody({ assetClasses: ['off-road'] }));
    const res = await submit(t, acme.key, { inspectionFormId: offRoad, assetId: truck, results: answers() });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.assetId).toBe('is a on-road asset; this form is for off-road');
  });

  it.each(['SOLD', 'ARCHIVED'])('an asset that is %s takes no inspections (409 asset_unavailable)', async (status) => {
    const assetId = await makeAsset(t, acme.key);
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: status });
    const res = await submit(t, acme.key, { inspectionFormId: formId, assetId, results: answers() });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('asset_unavailable');
  });

  it('an asset or form of another organisation is 422, as unknown ids are', async () => {
    const assetId = await makeAsset(t, acme.key);
    const a = await submit(t, acme.key, { inspectionFormId: formId, assetId: foreignAssetId, results: answers() });
    expect(a.statusCode).toBe(422);
    expect(a.json().fieldErrors).toEqual({ assetId: 'no asset with this id in your organisation' });
    const f = await submit(t, acme.key, { inspectionFormId: foreignFormId, assetId, results: answers() });
    expect(f.statusCode).toBe(422);
    expect(f.json().fieldErrors).toEqual({ inspectionFormId: 'no inspection form with this id in your organisation' });
  });
});
