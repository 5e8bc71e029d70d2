import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { expectCreated, makeAsset, makeHoursLog, makeProject } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignEntryId: string;

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  const theirs = await makeAsset(t, other.key, { nickname: 'Theirs' });
  foreignEntryId = expectCreated(await post({ ...fill(theirs) }, other.key), 'foreign fill').fuelEntryId;
});
afterAll(() => t.close());

const fill = (assetId: string, extra: Record<string, unknown> = {}) => ({
  assetId,
  fueledAt: daysAgo(1),
  volume: 50,
  unit: 'LITER',
  totalCost: 80,
  ...extra,
});
const post = (body: unknown, key = acme.key) => t.api.post('/api/v1/fuel-entries', key, body);
const entry = async (id: string) => (await t.api.get(`/api/v1/fuel-entries/${id}`, acme.key)).json().fuelEntry;
const events = async (type: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type }, orderBy: { createdAt: 'asc' } })).map(
    (e) => e.data as Record<string, unknown>,
  );

describe('POST /fuel-entries', () => {
  it('records a fill, derives the price per unit half-up to 3 decimals and emits fuel_entry.created', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Truck', assetClass: 'on-road' });
    const res = await post(fill(assetId, { volume: 30, unit: 'GALLON', totalCost: 100, fuelType: 'diesel' }));
    expect(res.statusCode).toBe(201);
    const { fuelEntryId, logId } = res.json();
    expect(logId).toBeNull();
    expect(await entry(fuelEntryId)).toMatchObject({
      assetId,
      volume: 30,
      unit: 'GALLON',
      volumeLiters: 113.562,
      totalCost: 100,
      pricePerUnit: 3.333,
      fuelType: 'diesel',
      void: false,
      partial: false,
      meterReading: null,
      logId: null,
    });
    expect((await events('fuel_entry.created')).find((e) => e.fuelEntryId === fuelEntryId)).toMatchObject({
      assetId,
      totalCost: 100,
      pricePerUnit: 3.333,
      unit: 'GALLON',
    });
  });

  it('derives the total from the price per unit, half-up to the cent (UK gallons convert to litres)', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await post(
      fill(assetId, { volume: 12.5, unit: 'GALLON_UK', totalCost: undefined, pricePerUnit: 1.479 }),
    );
    expect(res.statusCode).toBe(201);
    // 12.5 x 1.479 = 18.4875 -> 18.49; 12.5 x 4.54609 = 56.826125 L.
    expect(await entry(res.json().fuelEntryId)).toMatchObject({
      totalCost: 18.49,
      pricePerUnit: 1.479,
      volumeLiters: 56.826,
    });
  });

  it('wants exactly one of totalCost and pricePerUnit, and at most 2 and 3 decimals (422)', async () => {
    const assetId = await makeAsset(t, acme.key);
    const both = await post(fill(assetId, { pricePerUnit: 1.5 }));
    expect(both.statusCode).toBe(422);
    expect(both.json().fieldErrors).toHaveProperty('pricePerUnit');
    const neither = await post(fill(assetId, { totalCost: undefined }));
    expect(neither.statusCode).toBe(422);
    expect(neither.json().fieldErrors).toHaveProperty('totalCost');
    expect((await post(fill(assetId, { totalCost: 1.234 }))).json().fieldErrors).toHaveProperty('totalCost');
    expect(
      (await post(fill(assetId, { totalCost: undefined, pricePerUnit: 1.2345 }))).json().fieldErrors,
    ).toHaveProperty('pricePerUnit');
    expect((await post(fill(assetId, { unit: 'BARREL' }))).json().fieldErrors).toHaveProperty('unit');
    expect((await post(fill(assetId, { volume: 0 }))).json().fieldErrors).toHaveProperty('volume');
    expect((await post(fill(assetId, { fueledAt: new Date(Date.now() + DAY).toISOString() }))).statusCode).toBe(422);
  });

  it("rejects another organisation's asset or project with 422", async () => {
    const theirAsset = await makeAsset(t, other.key);
    expect((await post(fill(theirAsset))).json().fieldErrors).toHaveProperty('assetId');
    const theirProject = await makeProject(t, other.key);
    const assetId = await makeAsset(t, acme.key);
    expect((await post(fill(assetId, { projectId: theirProject }))).json().fieldErrors).toHaveProperty('projectId');
  });

  it("takes a vendor of the organisation; another organisation's or an archived vendor is 422", async () => {
    const assetId = await makeAsset(t, acme.key);
    const vendor = expectCreated(await t.api.post('/api/v1/vendors', acme.key, { name: 'Fuel Co' }), 'vendor').vendorId;
    const theirs = expectCreated(await t.api.post('/api/v1/vendors', other.key, { name: 'Fuel Co' }), 'v').vendorId;
    const ok = await post(fill(assetId, { vendorId: vendor }));
    expect(ok.statusCode).toBe(201);
    expect((await entry(ok.json().fuelEntryId)).vendorId).toBe(vendor);
    expect((await post(fill(assetId, { vendorId: theirs }))).json().fieldErrors).toHaveProperty('vendorId');
    await t.api.delete(`/api/v1/vendors/${vendor}`, acme.key);
    expect((await post(fill(assetId, { vendorId: vendor }))).json().fieldErrors).toHaveProperty('vendorId');
    // The fill that already names it keeps it through other changes.
    const kept = await t.api.patch(`/api/v1/fuel-entries/${ok.json().fuelEntryId}`, acme.key, {
      vendorId: vendor,
      partial: true,
    });
    expect(kept.statusCode).toBe(200);
  });

  it('records the meter reading through the hours pipeline (source fuel), with its rules', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Loader' });
    await makeHoursLog(t, acme.key, assetId, 100, { loggedAt: daysAgo(3) });
    const res = await post(fill(assetId, { meterReading: 110, fueledAt: daysAgo(2) }));
    expect(res.statusCode).toBe(201);
    const { fuelEntryId, logId } = res.json();
    const log = (await t.api.get(`/api/v1/hours/${logId}`, acme.key)).json().hoursLog;
    expect(log).toMatchObject({
      hoursReading: 110,
      delta: 10,
      source: 'fuel',
      sourceId: fuelEntryId,
      fuelVolume: null,
    });
    expect((await events('hours.logged')).find((e) => e.logId === logId)).toMatchObject({ source: 'fuel' });
    // Lower than the last reading without a note: 422 on the fill's own field, nothing written.
    const lower = await post(fill(assetId, { meterReading: 90, fueledAt: daysAgo(1) }));
    expect(lower.statusCode).toBe(422);
    expect(lower.json().fieldErrors).toHaveProperty('note');
    const withNote = await post(fill(assetId, { meterReading: 90, fueledAt: daysAgo(1), note: 'meter swapped' }));
    expect(withNote.statusCode).toBe(201);
    // A meterless asset takes no reading.
    const trailer = await makeAsset(t, acme.key, { assetClass: 'trailer' });
    expect((await post(fill(trailer, { meterReading: 5 }))).json().fieldErrors).toHaveProperty('meterReading');
    expect((await post(fill(trailer))).statusCode).toBe(201);
  });

  it('settles a fill posted again with its externalId: 200, same entry, fuel_entry.updated', async () => {
    const assetId = await makeAsset(t, acme.key);
    const fueledAt = daysAgo(1);
    const first = await post(fill(assetId, { externalId: 'card-1', totalCost: 80, meterReading: 10, fueledAt }));
    expect(first.statusCode).toBe(201);
    const { fuelEntryId, logId } = first.json();
    const again = await post(fill(assetId, { externalId: 'card-1', totalCost: 81.37, meterReading: 10, fueledAt }));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ok: true, fuelEntryId, logId });
    expect(await entry(fuelEntryId)).toMatchObject({ totalCost: 81.37, pricePerUnit: 1.627, externalId: 'card-1' });
    expect((await events('fuel_entry.updated')).filter((e) => e.fuelEntryId === fuelEntryId)).toEqual([
      expect.objectContaining({ totalCost: 81.37, changedFields: ['totalCost', 'pricePerUnit'] }),
    ]);
    const list = (await t.api.get(`/api/v1/fuel-entries?assetId=${assetId}`, acme.key)).json().fuelEntries;
    expect(list).toHaveLength(1);
    // Another asset under the same externalId is 422; a changed recorded reading too.
    const elsewhere = await makeAsset(t, acme.key);
    expect((await post(fill(elsewhere, { externalId: 'card-1' }))).json().fieldErrors).toHaveProperty('assetId');
    expect((await post(fill(assetId, { externalId: 'card-1', meterReading: 12 }))).json().fieldErrors).toHaveProperty(
      'meterReading',
    );
    // The same externalId in another organisation is another entry.
    const theirs = await makeAsset(t, other.key);
    expect((await post(fill(theirs, { externalId: 'card-1' }), other.key)).statusCode).toBe(201);
  });

  it('refuses fills on ARCHIVED assets, on SOLD ones after the sale, and before the purchase', async () => {
    const archived = await makeAsset(t, acme.key);
    await t.api.patch(`/api/v1/assets/${archived}`, acme.key, { lifecycleStatus: 'ARCHIVED' });
    expect((await post(fill(archived))).json().fieldErrors).toHaveProperty('assetId');
    const sold = await makeAsset(t, acme.key);
    await t.api.patch(`/api/v1/assets/${sold}`, acme.key, { lifecycleStatus: 'SOLD', soldAt: daysAgo(5) });
    expect((await post(fill(sold, { fueledAt: daysAgo(2) }))).json().fieldErrors).toHaveProperty('fueledAt');
    expect((await post(fill(sold, { fueledAt: daysAgo(6) }))).statusCode).toBe(201);
    const bought = await makeAsset(t, acme.key);
    await t.api.patch(`/api/v1/assets/${bought}`, acme.key, { purchaseDate: daysAgo(10) });
    expect((await post(fill(bought, { fueledAt: daysAgo(11) }))).json().fieldErrors).toHaveProperty('fueledAt');
    expect((await post(fill(bought, { fueledAt: daysAgo(9) }))).statusCode).toBe(201);
  });
});

describe('PATCH, DELETE and GET /fuel-entries', () => {
  it('voids a fill, marks it partial and settles the price; an empty patch is 422', async () => {
    const assetId = await makeAsset(t, acme.key);
    const { fuelEntryId } = expectCreated(await post(fill(assetId)), 'fill');
    const res = await t.api.patch(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key, { void: true, partial: true });
    expect(res.statusCode).toBe(200);
    expect(await entry(fuelEntryId)).toMatchObject({ void: true, partial: true, totalCost: 80 });
    await t.api.patch(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key, { volume: 40 });
    expect(await entry(fuelEntryId)).toMatchObject({ volume: 40, totalCost: 80, pricePerUnit: 2 });
    await t.api.patch(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key, { pricePerUnit: 2.5 });
    expect(await entry(fuelEntryId)).toMatchObject({ totalCost: 100, pricePerUnit: 2.5 });
    expect((await t.api.patch(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key, {})).statusCode).toBe(422);
  });

  it('adds a reading later once; deleting keeps the reading in the meter history, then the entry is 404', async () => {
    const assetId = await makeAsset(t, acme.key);
    const { fuelEntryId } = expectCreated(await post(fill(assetId, { fueledAt: daysAgo(2) })), 'fill');
    const added = await t.api.patch(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key, { meterReading: 40 });
    expect(added.statusCode).toBe(200);
    const { logId } = added.json();
    expect(logId).toEqual(expect.any(String));
    const del = await t.api.delete(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key);
    expect(del.statusCode).toBe(200);
    expect((await t.api.get(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key)).statusCode).toBe(404);
    expect((await t.api.delete(`/api/v1/fuel-entries/${fuelEntryId}`, acme.key)).statusCode).toBe(404);
    const log = (await t.api.get(`/api/v1/hours/${logId}`, acme.key)).json().hoursLog;
    expect(log).toMatchObject({ hoursReading: 40, reviewStatus: 'NONE' });
    // A voided fill's reading stays out after deletion: its log is REJECTED.
    const voided = expectCreated(
      await post(fill(assetId, { fueledAt: daysAgo(1), meterReading: 45, void: true })),
      'void fill',
    );
    await t.api.delete(`/api/v1/fuel-entries/${voided.fuelEntryId}`, acme.key);
    expect((await t.api.get(`/api/v1/hours/${voided.logId}`, acme.key)).json().hoursLog.reviewStatus).toBe('REJECTED');
  });

  it('lists newest first with asset, project and period filters, page by page', async () => {
    const assetId = await makeAsset(t, acme.key);
    const projectId = await makeProject(t, acme.key, { name: 'Quarry' });
    const ids: string[] = [];
    for (let i = 5; i >= 1; i--)
      ids.push(
        expectCreated(await post(fill(assetId, { fueledAt: daysAgo(i), projectId: i % 2 ? projectId : null })), 'f')
          .fuelEntryId,
      );
    const page1 = (await t.api.get(`/api/v1/fuel-entries?assetId=${assetId}&limit=3`, acme.key)).json();
    expect(page1.fuelEntries.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3], ids[2]]);
    const page2 = (
      await t.api.get(`/api/v1/fuel-entries?assetId=${assetId}&limit=3&cursor=${page1.nextCursor}`, acme.key)
    ).json();
    expect(page2.fuelEntries.map((e: { id: string }) => e.id)).toEqual([ids[1], ids[0]]);
    expect(page2.nextCursor).toBeNull();
    const tagged = (await t.api.get(`/api/v1/fuel-entries?projectId=${projectId}`, acme.key)).json().fuelEntries;
    expect(tagged.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[2], ids[0]]);
    const since = encodeURIComponent(daysAgo(4.5));
    const until = encodeURIComponent(daysAgo(1.5));
    const window = (
      await t.api.get(`/api/v1/fuel-entries?assetId=${assetId}&since=${since}&until=${until}`, acme.key)
    ).json();
    expect(window.fuelEntries.map((e: { id: string }) => e.id)).toEqual([ids[3], ids[2], ids[1]]);
  });
});

securitySuite('fuel entries', () => ({ t, tenant: acme }), [
  { label: 'GET /fuel-entries', method: 'GET', path: () => '/api/v1/fuel-entries', scope: 'fuel:read' },
  { label: 'POST /fuel-entries', method: 'POST', path: () => '/api/v1/fuel-entries', scope: 'fuel:write' },
  {
    label: 'GET /fuel-entries/:id',
    method: 'GET',
    path: () => `/api/v1/fuel-entries/${foreignEntryId}`,
    scope: 'fuel:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /fuel-entries/:id',
    method: 'PATCH',
    path: () => `/api/v1/fuel-entries/${foreignEntryId}`,
    scope: 'fuel:write',
    body: { void: true },
    crossTenant: true,
  },
  {
    label: 'DELETE /fuel-entries/:id',
    method: 'DELETE',
    path: () => `/api/v1/fuel-entries/${foreignEntryId}`,
    scope: 'fuel:write',
    crossTenant: true,
  },
]);
