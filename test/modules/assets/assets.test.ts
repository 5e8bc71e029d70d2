import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignAssetId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignAssetId = await makeAsset(t, other.key, { nickname: 'Theirs', assetClass: 'trailer' });
});
afterAll(() => t.close());

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/assets', key, body);
const events = (orgId: string, type: string) =>
  t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });

describe('POST /assets', () => {
  it('creates with meter defaults derived from the class and IN_SERVICE', async () => {
    for (const [assetClass, meterType, meterUnit] of [
      ['on-road', 'ODOMETER', 'mi'],
      ['off-road', 'HOURS', 'hrs'],
      ['trailer', 'NONE', 'none'],
    ]) {
      const res = await create({ nickname: `  ${assetClass} one `, assetClass, vin: '1FTFW1E50PFA00001' });
      expect(res.statusCode).toBe(201);
      const { assetId } = res.json();
      const detail = (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset;
      expect(detail).toMatchObject({
        nickname: `${assetClass} one`,
        assetClass,
        meterType,
        meterUnit,
        lifecycleStatus: 'IN_SERVICE',
        vin: '1FTFW1E50PFA00001',
      });
    }
  });

  it('lets the caller override the meter type', async () => {
    const { assetId } = (await create({ nickname: 'Loader', assetClass: 'on-road', meterType: 'HOURS' })).json();
    expect((await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset).toMatchObject({
      meterType: 'HOURS',
      meterUnit: 'hrs',
    });
  });

  it('rejects a missing or blank nickname and an unsupported class with 422 fieldErrors', async () => {
    const missing = await create({ assetClass: 'trailer' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toMatchObject({
      ok: false,
      error: 'validation_failed',
      fieldErrors: { nickname: 'is required' },
    });
    const blank = await create({ nickname: '   ', assetClass: 'boat' });
    expect(blank.statusCode).toBe(422);
    expect(Object.keys(blank.json().fieldErrors).sort()).toEqual(['assetClass', 'nickname']);
  });

  it('rejects a yard of another organisation', async () => {
    const yard = await t.db.prisma.yard.create({ data: { orgId: other.orgId, name: 'Their yard' } });
    const res = await create({ nickname: 'X', assetClass: 'trailer', yardId: yard.id });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('yardId');
  });

  it('answers 400 invalid_json for an unparseable body and writes nothing', async () => {
    const before = await t.db.prisma.asset.count();
    const res = await t.api.raw('POST', '/api/v1/assets', acme.key, '{"nickname": "x",', {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid_json' });
    expect(await t.db.prisma.asset.count()).toBe(before);
  });

  it('records asset.created in the outbox in the same transaction', async () => {
    const { assetId } = (await create({ nickname: 'Evented', assetClass: 'off-road' })).json();
    const created = (await events(acme.orgId, 'asset.created')).find(
      (e) => (e.data as { assetId: string }).assetId === assetId,
    );
    expect(created?.data).toMatchObject({ assetId, nickname: 'Evented', assetClass: 'off-road', actorId: acme.userId });
  });
});

describe('POST /assets/batch', () => {
  it('accepts an array or {entries} and reports each entry', async () => {
    for (const body of [
      [
        { nickname: 'B1', assetClass: 'trailer' },
        { nickname: '', assetClass: 'trailer' },
        { nickname: 'B3', assetClass: 'nope' },
      ],
      {
        entries: [
          { nickname: 'B1', assetClass: 'trailer' },
          { nickname: '', assetClass: 'trailer' },
          { nickname: 'B3', assetClass: 'nope' },
        ],
      },
    ]) {
      const res = await t.api.post('/api/v1/assets/batch', acme.key, body);
      expect(res.statusCode).toBe(200);
      const json = res.json();
      expect(json.summary).toEqual({ received: 3, succeeded: 1, failed: 2 });
      expect(json.results[0]).toMatchObject({ index: 0, ok: true });
      expect(json.results[1]).toMatchObject({
        index: 1,
        ok: false,
        error: 'validation_failed',
        fieldErrors: { nickname: 'cannot be blank' },
      });
      expect(json.results[2].fieldErrors).toHaveProperty('assetClass');
      const stored = await t.db.prisma.asset.findUnique({ where: { id: json.results[0].assetId } });
      expect(stored?.orgId).toBe(acme.orgId);
    }
  });

  it.each([
    ['invalid_envelope', { items: [] }],
    ['invalid_envelope', '"just a string"'],
    ['empty_batch', []],
    ['empty_batch', { entries: [] }],
    ['batch_too_large', Array.from({ length: 51 }, (_, i) => ({ nickname: `N${i}`, assetClass: 'trailer' }))],
  ])('answers 400 %s', async (code, body) => {
    const before = await t.db.prisma.asset.count();
    const res = await t.api.post('/api/v1/assets/batch', acme.key, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: code });
    expect(await t.db.prisma.asset.count()).toBe(before);
  });

  it('accepts exactly 50 entries', async () => {
    const res = await t.api.post(
      '/api/v1/assets/batch',
      acme.key,
      Array.from({ length: 50 }, (_, i) => ({ nickname: `Fifty ${i}`, assetClass: 'trailer' })),
    );
    expect(res.json().summary).toEqual({ received: 50, succeeded: 50, failed: 0 });
  });
});

describe('GET /assets', () => {
  it('walks every row exactly once while rows are being inserted', async () => {
    const fresh = await t.tenant('Pager');
    const batch = Array.from({ length: 23 }, (_, i) => ({ nickname: `P${i}`, assetClass: 'trailer' }));
    await t.api.post('/api/v1/assets/batch', fresh.key, batch);
    const original = new Set((await t.db.prisma.asset.findMany({ where: { orgId: fresh.orgId } })).map((a) => a.id));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await t.api.get(`/api/v1/assets?limit=5${cursor ? `&cursor=${cursor}` : ''}`, fresh.key);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.assets.map((a: { id: string }) => a.id));
      cursor = body.nextCursor;
      await create({ nickname: `Inserted during walk ${pages++}`, assetClass: 'trailer' }, fresh.key);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of original) expect(seen).toContain(id);
    expect(pages).toBe(5);
  });

  it('returns only the caller organisation, newest first, and clamps limit to 1..200', async () => {
    const res = await t.api.get('/api/v1/assets?limit=500', other.key);
    const { assets, nextCursor } = res.json();
    expect(assets.map((a: { id: string }) => a.id)).toEqual([foreignAssetId]);
    expect(nextCursor).toBeNull();
    const one = await t.api.get('/api/v1/assets?limit=0', acme.key);
    expect(one.json().assets).toHaveLength(1);
  });

  it('rejects a cursor it did not issue with 422', async () => {
    const res = await t.api.get('/api/v1/assets?cursor=not-a-cursor', acme.key);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('cursor');
  });
});

describe('PATCH /assets/:id', () => {
  let assetId: string;
  beforeAll(async () => {
    assetId = await makeAsset(t, acme.key, { nickname: 'Patchable', assetClass: 'on-road' });
  });

  it('updates fields, clears with null and reports changedFields in asset.updated', async () => {
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { licensePlate: 'ABC 123', purchaseCost: 1000 });
    const res = await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, {
      licensePlate: null,
      purchaseCost: 1000,
      registrationExpiresAt: '2027-03-01T00:00:00Z',
      lifecycleStatus: 'OUT_OF_SERVICE',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, assetId });
    const asset = (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset;
    expect(asset).toMatchObject({
      licensePlate: null,
      purchaseCost: 1000,
      registrationExpiresAt: '2027-03-01T00:00:00.000Z',
      lifecycleStatus: 'OUT_OF_SERVICE',
    });
    const updates = (await events(acme.orgId, 'asset.updated')).filter(
      (e) => (e.data as { assetId: string }).assetId === assetId,
    );
    expect(updates.map((e) => (e.data as { changedFields: string[] }).changedFields)).toEqual([
      ['licensePlate', 'purchaseCost'],
      ['licensePlate', 'registrationExpiresAt', 'lifecycleStatus'],
    ]);
  });

  it('emits nothing when nothing changes', async () => {
    const before = (await events(acme.orgId, 'asset.updated')).length;
    const res = await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { purchaseCost: 1000 });
    expect(res.statusCode).toBe(200);
    expect((await events(acme.orgId, 'asset.updated')).length).toBe(before);
  });

  it('records the sale date when an asset is marked SOLD without one', async () => {
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, {
      lifecycleStatus: 'SOLD',
      soldPrice: 250,
      soldTo: 'Bob',
    });
    const asset = (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset;
    expect(asset).toMatchObject({ lifecycleStatus: 'SOLD', soldPrice: 250, soldTo: 'Bob' });
    expect(Date.parse(asset.soldAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it.each([
    ['an empty body', {}, 'body'],
    ['only unknown fields', { colour: 'red' }, 'body'],
    ['a blank nickname', { nickname: '  ' }, 'nickname'],
    ['an unknown lifecycle status', { lifecycleStatus: 'SCRAPPED' }, 'lifecycleStatus'],
    ['an unknown depreciation method', { depreciationMethod: 'MAGIC' }, 'depreciationMethod'],
    ['a negative cost', { purchaseCost: -1 }, 'purchaseCost'],
    ['a bad date', { soldAt: 'yesterday' }, 'soldAt'],
    ['a nickname of null', { nickname: null }, 'nickname'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it('checks yard, parent asset and operator belong to the organisation', async () => {
    const res = await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, {
      parentAssetId: foreignAssetId,
      primaryOperatorId: other.userId,
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['parentAssetId', 'primaryOperatorId']);
    const self = await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { parentAssetId: assetId });
    expect(self.statusCode).toBe(422);
    const ok = await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, {
      primaryOperatorId: acme.userId,
      pmInterval: 250,
      pmBaselineReading: 1000,
    });
    expect(ok.statusCode).toBe(200);
    const asset = (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset;
    expect(asset).toMatchObject({
      primaryOperatorId: acme.userId,
      pmInterval: 250,
      pmBaselineReading: 1000,
      pmNextDueReading: 1250,
    });
  });
});

describe('GET /assets/:id', () => {
  it('computes straight-line book value and the repair summary', async () => {
    const { assetId } = (await create({ nickname: 'Depreciating', assetClass: 'off-road' })).json();
    const twoYearsAgo = new Date(Date.now() - 2 * 365.25 * 24 * 3600 * 1000).toISOString();
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, {
      purchaseCost: 10_000,
      purchaseDate: twoYearsAgo,
      usefulLifeYears: 10,
      depreciationMethod: 'STRAIGHT_LINE',
    });
    await t.db.prisma.repair.createMany({
      data: [
        { orgId: acme.orgId, assetId, cost: 120.5 },
        { orgId: acme.orgId, assetId, cost: 79.5 },
      ],
    });
    const { asset } = (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json();
    expect(asset.financialSummary).toEqual({
      purchaseCost: 10_000,
      currentValue: null,
      bookValue: 8000,
      totalRepairCost: 200,
      repairCount: 2,
    });
    expect(asset.checkout).toBeNull();
  });

  it('is 404 for an unknown id', async () => {
    const res = await t.api.get('/api/v1/assets/does-not-exist', acme.key);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
  });
});

securitySuite('assets', () => ({ t, tenant: acme }), [
  { label: 'GET /assets', method: 'GET', path: () => '/api/v1/assets', scope: 'assets:read' },
  {
    label: 'POST /assets',
    method: 'POST',
    path: () => '/api/v1/assets',
    scope: 'assets:write',
    body: { nickname: 'x', assetClass: 'trailer' },
  },
  { label: 'POST /assets/batch', method: 'POST', path: () => '/api/v1/assets/batch', scope: 'assets:write', body: [] },
  {
    label: 'GET /assets/:id',
    method: 'GET',
    path: () => `/api/v1/assets/${foreignAssetId}`,
    scope: 'assets:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /assets/:id',
    method: 'PATCH',
    path: () => `/api/v1/assets/${foreignAssetId}`,
    scope: 'assets:write',
    body: { nickname: 'Stolen' },
    crossTenant: true,
  },
]);
