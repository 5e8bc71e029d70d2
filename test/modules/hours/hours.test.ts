import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { makeAsset } from '../../helpers/app/factories.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignAssetId: string;
let foreignLogId: string;
const HOUR = 3600 * 1000;
const ago = (hours: number) => new Date(Date.now() - hours * HOUR).toISOString();

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignAssetId = (
    await t.api.post('/api/v1/assets', other.key, { nickname: 'Theirs', assetClass: 'off-road' })
  ).json().assetId;
  foreignLogId = (await t.api.post('/api/v1/hours', other.key, { assetId: foreignAssetId, hoursReading: 5 })).json()
    .logId;
});
afterAll(() => t.close());

const newAsset = (body: Record<string, unknown> = {}, key = acme.key) =>
  makeAsset(t, key, { nickname: 'Excavator', ...body });
const log = (body: unknown, headers?: Record<string, string>, key = acme.key) =>
  t.api.post('/api/v1/hours', key, body, headers);
const assetRow = (id: string) => t.db.prisma.asset.findUniqueOrThrow({ where: { id } });
const logsOf = (assetId: string) => t.db.prisma.meterLog.findMany({ where: { assetId } });
const eventsOf = (type: string) => t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type } });

securitySuite('hours', () => ({ t, tenant: acme }), [
  { label: 'GET /hours', method: 'GET', path: () => '/api/v1/hours', scope: 'hours:read' },
  {
    label: 'POST /hours',
    method: 'POST',
    path: () => '/api/v1/hours',
    scope: 'hours:write',
    body: { assetId: 'x', hoursReading: 1 },
  },
  {
    label: 'POST /hours/batch',
    method: 'POST',
    path: () => '/api/v1/hours/batch',
    scope: 'hours:write',
    body: [{ assetId: 'x', hoursReading: 1 }],
  },
  {
    label: 'GET /hours/:id',
    method: 'GET',
    path: () => `/api/v1/hours/${foreignLogId}`,
    scope: 'hours:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /hours/:id',
    method: 'PATCH',
    path: () => `/api/v1/hours/${foreignLogId}`,
    scope: 'hours:write',
    crossTenant: true,
    body: { reviewStatus: 'APPROVED' },
  },
]);

describe('POST /hours', () => {
  it('computes delta from the previous reading, keeps the asset current and emits hours.logged', async () => {
    const assetId = await newAsset();
    const first = await log({ assetId, hoursReading: 100, loggedAt: ago(10) });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ ok: true, autoFlagId: null, delta: 0, reviewStatus: 'NONE', replayed: false });
    const second = await log({
      assetId,
      hoursReading: 104.3,
      loggedAt: ago(5),
      projectId: null,
      fuelVolume: 12.5,
      fuelCostTotal: 48.1,
      lat: 10,
      lng: 20,
      loggedByDeviceId: 'tab-3',
      note: 'end of shift',
    });
    expect(second.json()).toMatchObject({ delta: 4.3, reviewStatus: 'NONE' });
    const detail = (await t.api.get(`/api/v1/hours/${second.json().logId}`, acme.key)).json().hoursLog;
    expect(detail).toMatchObject({
      assetId,
      hoursReading: 104.3,
      delta: 4.3,
      fuelVolume: 12.5,
      fuelUnit: 'GALLON',
      fuelCostTotal: 48.1,
      lat: 10,
      lng: 20,
      loggedById: acme.userId,
      loggedByDeviceId: 'tab-3',
      note: 'end of shift',
      state: null,
      reviewStatus: 'NONE',
      source: 'api',
      sourceId: null,
      asset: { id: assetId, nickname: 'Excavator', meterType: 'HOURS', meterUnit: 'hrs' },
    });
    const asset = await assetRow(assetId);
    expect(asset.lastMeterReading).toBe(104.3);
    expect(asset.lastMeterAt?.toISOString()).toBe(detail.loggedAt);
    const event = (await eventsOf('hours.logged')).find((e) => (e.data as { logId: string }).logId === detail.id);
    expect(event?.data).toMatchObject({
      logId: detail.id,
      assetId,
      hoursReading: 104.3,
      delta: 4.3,
      loggedAt: detail.loggedAt,
      autoFlagId: null,
      reviewStatus: 'NONE',
      source: 'api',
      sourceId: null,
    });
  });

  it('stores projectId and the fuel fields; a project of another organisation is 422', async () => {
    const assetId = await newAsset();
    const project = await t.db.prisma.project.create({ data: { orgId: acme.orgId, name: 'Bypass' } });
    const theirs = await t.db.prisma.project.create({ data: { orgId: other.orgId, name: 'Theirs' } });
    const res = await log({ assetId, hoursReading: 1, projectId: project.id, fuelVolume: 40, fuelUnit: 'LITER' });
    expect(await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: res.json().logId } })).toMatchObject({
      projectId: project.id,
      fuelVolume: 40,
      fuelUnit: 'LITER',
    });
    const bad = await log({ assetId, hoursReading: 2, projectId: theirs.id });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().fieldErrors).toHaveProperty('projectId');
  });

  it('answers 422 (never 400) for every validation failure, and writes nothing', async () => {
    const assetId = await newAsset();
    const trailer = await newAsset({ assetClass: 'trailer' });
    const cases: [unknown, string, Record<string, string>?][] = [
      [{ hoursReading: 1 }, 'assetId'],
      [{ assetId, hoursReading: 'ten' }, 'hoursReading'],
      [{ assetId, hoursReading: -1 }, 'hoursReading'],
      [{ assetId }, 'hoursReading'],
      [{ assetId: foreignAssetId, hoursReading: 1 }, 'assetId'],
      [{ assetId: trailer, hoursReading: 5, state: 'parked' }, 'hoursReading'],
      [{ assetId: trailer }, 'state'],
      [{ assetId, hoursReading: 1, loggedAt: 'yesterday' }, 'loggedAt'],
      [{ assetId, hoursReading: 1, loggedAt: new Date(Date.now() + HOUR).toISOString() }, 'loggedAt'],
      [{ assetId, hoursReading: 1, lat: 91, lng: 0 }, 'lat'],
      [{ assetId, hoursReading: 1, lat: 10 }, 'lng'],
      [{ assetId, hoursReading: 1, fuelUnit: 'BARREL' }, 'fuelUnit'],
      [{ assetId, hoursReading: 1, fuelVolume: -3 }, 'fuelVolume'],
      [{ assetId, hoursReading: 1, note: 'n'.repeat(1001) }, 'note'],
      [{ assetId, hoursReading: 1, clientMutationId: 'c'.repeat(129) }, 'clientMutationId'],
      [{ assetId, hoursReading: 1 }, 'Idempotency-Key', { 'idempotency-key': 'k'.repeat(129) }],
      [[{ assetId, hoursReading: 1 }], 'body'],
      ['"just a string"', 'body'],
    ];
    for (const [body, field, headers] of cases) {
      const res = await log(body, headers);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(422);
      expect(res.json().error).toBe('validation_failed');
      expect(res.json().fieldErrors, JSON.stringify(body)).toHaveProperty([field]);
    }
    const empty = await t.api.raw('POST', '/api/v1/hours', acme.key, '', { 'content-type': 'application/json' });
    expect(empty.statusCode).toBe(422);
    expect(await logsOf(assetId)).toHaveLength(0);
    expect(await logsOf(trailer)).toHaveLength(0);
  });

  it('still answers 400 invalid_json for an unparseable body (global rule)', async () => {
    const res = await t.api.raw('POST', '/api/v1/hours', acme.key, '{"assetId":', {});
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_json');
  });

  it('accepts an Idempotency-Key of exactly 128 characters', async () => {
    const assetId = await newAsset();
    expect((await log({ assetId, hoursReading: 1 }, { 'idempotency-key': 'k'.repeat(128) })).statusCode).toBe(201);
  });

  it('logs state-only entries for assets with meter NONE without touching the meter', async () => {
    const trailer = await newAsset({ assetClass: 'trailer' });
    const res = await log({ assetId: trailer, state: 'Parked at north yard' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ delta: 0, autoFlagId: null, reviewStatus: 'NONE' });
    const row = await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: res.json().logId } });
    expect(row).toMatchObject({ hoursReading: 0, delta: 0, state: 'Parked at north yard' });
    expect((await assetRow(trailer)).lastMeterReading).toBeNull();
  });
});

describe('POST /hours/batch', () => {
  it('processes entries independently in order, with per-entry clientMutationId idempotency', async () => {
    const assetId = await newAsset();
    const res = await t.api.post('/api/v1/hours/batch', acme.key, {
      entries: [
        { assetId, hoursReading: 10, clientMutationId: 'b-1', loggedAt: ago(5) },
        { assetId, hoursReading: 'x' },
        { assetId, hoursReading: 12, clientMutationId: 'b-2', loggedAt: ago(4) },
        { assetId, hoursReading: 5, loggedAt: ago(3) },
        { assetId, hoursReading: 999, clientMutationId: 'b-1' },
        { assetId: foreignAssetId, hoursReading: 1 },
      ],
    });
    expect(res.statusCode).toBe(200);
    const { results, summary } = res.json();
    expect(summary).toEqual({ received: 6, succeeded: 3, failed: 3 });
    expect(results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results[0]).toMatchObject({ ok: true, autoFlagId: null, delta: 0, replayed: false });
    expect(results[1]).toMatchObject({
      ok: false,
      error: 'validation_failed',
      fieldErrors: { hoursReading: expect.any(String) },
    });
    expect(results[2]).toMatchObject({ ok: true, delta: 2 });
    expect(results[3]).toMatchObject({ ok: false, fieldErrors: { note: expect.stringMatching(/lower/) } });
    expect(results[4]).toMatchObject({ ok: true, logId: results[0].logId, replayed: true });
    expect(results[5]).toMatchObject({ ok: false, fieldErrors: { assetId: expect.any(String) } });
    expect(await logsOf(assetId)).toHaveLength(2);

    const replay = (
      await t.api.post('/api/v1/hours/batch', acme.key, [{ assetId, hoursReading: 10, clientMutationId: 'b-2' }])
    ).json();
    expect(replay.results[0]).toMatchObject({ ok: true, logId: results[2].logId, replayed: true });
  });

  it('returns autoFlagId per entry', async () => {
    const assetId = await newAsset({ pmInterval: 50 });
    const res = (
      await t.api.post('/api/v1/hours/batch', acme.key, [
        { assetId, hoursReading: 10, loggedAt: ago(100) },
        { assetId, hoursReading: 60, loggedAt: ago(1) },
      ])
    ).json();
    expect(res.results[0].autoFlagId).toBeNull();
    expect(res.results[1].autoFlagId).toEqual(expect.any(String));
  });

  it.each([
    ['invalid_envelope', { items: [] }],
    ['invalid_envelope', '"nope"'],
    ['empty_batch', []],
    ['empty_batch', { entries: [] }],
    ['batch_too_large', Array.from({ length: 101 }, () => ({ assetId: 'a', hoursReading: 1 }))],
  ])('answers 400 %s', async (code, body) => {
    const before = await t.db.prisma.meterLog.count();
    const res = await t.api.post('/api/v1/hours/batch', acme.key, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: code });
    expect(await t.db.prisma.meterLog.count()).toBe(before);
  });

  it('accepts exactly 100 entries', async () => {
    const assetId = await newAsset({ assetClass: 'trailer' });
    const res = await t.api.post(
      '/api/v1/hours/batch',
      acme.key,
      Array.from({ length: 100 }, (_, i) => ({ assetId, state: `stop ${i}` })),
    );
    expect(res.json().summary).toEqual({ received: 100, succeeded: 100, failed: 0 });
  });
});

describe('GET /hours', () => {
  let fresh: TestTenant;
  let a1: string;
  let a2: string;
  const ids: string[] = [];
  beforeAll(async () => {
    fresh = await t.tenant('Lister');
    a1 = await newAsset({}, fresh.key);
    a2 = await newAsset({}, fresh.key);
    for (const [assetId, hoursReading, at] of [
      [a1, 1, 50],
      [a2, 1, 40],
      [a1, 2, 30],
      [a2, 2, 20],
      [a1, 3, 10],
    ] as const) {
      ids.push((await log({ assetId, hoursReading, loggedAt: ago(at) }, undefined, fresh.key)).json().logId);
    }
  });
  const list = async (qs: string) => {
    const res = await t.api.get(`/api/v1/hours${qs}`, fresh.key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('lists newest first by loggedAt, only the caller organisation', async () => {
    expect((await list('')).hoursLogs.map((l: { id: string }) => l.id)).toEqual([...ids].reverse());
  });

  it('filters by assetId and since', async () => {
    expect((await list(`?assetId=${a1}`)).hoursLogs.map((l: { id: string }) => l.id)).toEqual([ids[4], ids[2], ids[0]]);
    const since = encodeURIComponent(ago(25));
    expect((await list(`?since=${since}`)).hoursLogs.map((l: { id: string }) => l.id)).toEqual([ids[4], ids[3]]);
    expect((await t.api.get('/api/v1/hours?since=soon', fresh.key)).statusCode).toBe(422);
  });

  it('pages with a cursor', async () => {
    const first = await list('?limit=2');
    const second = await list(`?limit=2&cursor=${first.nextCursor}`);
    const third = await list(`?limit=2&cursor=${second.nextCursor}`);
    expect([...first.hoursLogs, ...second.hoursLogs, ...third.hoursLogs].map((l: { id: string }) => l.id)).toEqual(
      [...ids].reverse(),
    );
    expect(third.nextCursor).toBeNull();
    expect((await t.api.get('/api/v1/hours?cursor=bogus', fresh.key)).statusCode).toBe(422);
  });

  it('filters by review status (unknown values ignored)', async () => {
    expect((await list('?reviewStatus=PENDING')).hoursLogs).toEqual([]);
    expect((await list('?reviewStatus=NONE,WHATEVER')).hoursLogs).toHaveLength(5);
  });
});
