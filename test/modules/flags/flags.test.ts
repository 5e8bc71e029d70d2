import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeFlag } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let assetId: string;
let foreignAssetId: string;
let foreignFlagId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  assetId = await makeAsset(t, acme.key, { nickname: 'Dozer 7', assetClass: 'off-road' });
  foreignAssetId = await makeAsset(t, other.key, { nickname: 'Theirs', assetClass: 'off-road' });
  foreignFlagId = await makeFlag(t, other.key, foreignAssetId);
});
afterAll(() => t.close());

const raise = (body: unknown, key = acme.key) => t.api.post('/api/v1/flags', key, body);
const resolve = (id: string, body: unknown, key = acme.key) => t.api.patch(`/api/v1/flags/${id}`, key, body);
const eventsOf = (type: string, orgId = acme.orgId) =>
  t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });

securitySuite('flags', () => ({ t, tenant: acme }), [
  { label: 'GET /flags', method: 'GET', path: () => '/api/v1/flags', scope: 'flags:read' },
  {
    label: 'POST /flags',
    method: 'POST',
    path: () => '/api/v1/flags',
    scope: 'flags:write',
    body: { assetId: 'x', severity: 'RED' },
  },
  {
    label: 'GET /flags/:id',
    method: 'GET',
    path: () => `/api/v1/flags/${foreignFlagId}`,
    scope: 'flags:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /flags/:id',
    method: 'PATCH',
    path: () => `/api/v1/flags/${foreignFlagId}`,
    scope: 'flags:write',
    crossTenant: true,
    body: {
      status: 'RESOLVED',
      resolutionNote: 'Replaced the hydraulic hose on the boom',
      returnToServiceConfirmed: true,
    },
  },
]);

describe('POST /flags', () => {
  it('creates an OPEN flag with geo and records flag.created with the spec payload', async () => {
    const res = await raise({
      assetId,
      severity: 'RED',
      note: '  Hydraulic leak at boom  ',
      photoUrl: 'https://img.example.com/1.jpg',
      geo: { lat: 51.5, lng: -0.12, accuracyM: 8 },
    });
    expect(res.statusCode).toBe(201);
    const { flagId } = res.json();
    const detail = (await t.api.get(`/api/v1/flags/${flagId}`, acme.key)).json().flag;
    expect(detail).toMatchObject({
      id: flagId,
      assetId,
      severity: 'RED',
      status: 'OPEN',
      note: 'Hydraulic leak at boom',
      raisedById: acme.userId,
      lat: 51.5,
      lng: -0.12,
      accuracyM: 8,
      resolvedAt: null,
      resolvedById: null,
      resolvedBy: null,
      asset: { id: assetId, nickname: 'Dozer 7' },
      raisedBy: { userId: acme.userId, name: 'Olive Ops' },
    });
    const event = (await eventsOf('flag.created')).find((e) => (e.data as { flagId: string }).flagId === flagId);
    expect(event?.data).toEqual({
      flagId,
      assetId,
      assetNickname: 'Dozer 7',
      severity: 'RED',
      reason: 'Hydraulic leak at boom',
      photoUrl: 'https://img.example.com/1.jpg',
      raisedBy: { userId: acme.userId, name: 'Olive Ops' },
      raisedAt: detail.createdAt,
      pmDueReading: null,
    });
  });

  it('accepts a flag without note or geo', async () => {
    const res = await raise({ assetId, severity: 'YELLOW', geo: null, note: null });
    expect(res.statusCode).toBe(201);
    const flag = await t.db.prisma.flag.findUniqueOrThrow({ where: { id: res.json().flagId } });
    expect(flag).toMatchObject({ note: null, lat: null, lng: null, accuracyM: null, severity: 'YELLOW' });
  });

  it.each([
    [{ severity: 'RED' }, 'assetId'],
    [{ assetId: 'a' }, 'severity'],
    [{ assetId: 'a', severity: 'AUTO_PM' }, 'severity'],
    [{ assetId: 'a', severity: 'GREEN' }, 'severity'],
    [{ assetId: 'a', severity: 'RED', note: 'x'.repeat(501) }, 'note'],
    [{ assetId: 'a', severity: 'RED', geo: { lat: 90.01, lng: 0 } }, 'geo.lat'],
    [{ assetId: 'a', severity: 'RED', geo: { lat: -90.5, lng: 0 } }, 'geo.lat'],
    [{ assetId: 'a', severity: 'RED', geo: { lat: 0, lng: 180.5 } }, 'geo.lng'],
    [{ assetId: 'a', severity: 'RED', geo: { lat: 0, lng: -181 } }, 'geo.lng'],
    [{ assetId: 'a', severity: 'RED', geo: { lat: 0, lng: 0, accuracyM: -1 } }, 'geo.accuracyM'],
    [{ assetId: 'a', severity: 'RED', geo: { lat: 0, lng: 0, accuracyM: 100_001 } }, 'geo.accuracyM'],
    [{ assetId: 'a', severity: 'RED', geo: { lng: 0 } }, 'geo.lat'],
    [{ assetId: 'a', severity: 'RED', photoUrl: 'ftp://x/y' }, 'photoUrl'],
  ])('rejects %j with 422 on %s', async (body, field) => {
    const before = await t.db.prisma.flag.count();
    const res = await raise(body);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    expect(res.json().fieldErrors).toHaveProperty(field);
    expect(await t.db.prisma.flag.count()).toBe(before);
  });

  it('accepts the boundaries: note of 500, lat ±90, lng ±180, accuracyM 0 and 100000', async () => {
    for (const geo of [
      { lat: 90, lng: 180, accuracyM: 0 },
      { lat: -90, lng: -180, accuracyM: 100_000 },
    ]) {
      expect((await raise({ assetId, severity: 'YELLOW', note: 'n'.repeat(500), geo })).statusCode).toBe(201);
    }
  });

  it('says AUTO_PM is system-only', async () => {
    const res = await raise({ assetId, severity: 'AUTO_PM' });
    expect(res.json().fieldErrors.severity).toMatch(/only by the system/);
  });

  it('rejects an asset of another organisation with 422', async () => {
    const res = await raise({ assetId: foreignAssetId, severity: 'RED' });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('assetId');
  });

  it('queues one PUSH and one EMAIL notification for the flag, in the same transaction', async () => {
    const { flagId } = (await raise({ assetId, severity: 'RED', note: 'Brakes soft' })).json();
    const rows = await t.db.prisma.notification.findMany({
      where: { orgId: acme.orgId, kind: 'flag.created', dedupeKey: { startsWith: `flag:${flagId}:` } },
    });
    expect(rows.map((r) => r.channel).sort()).toEqual(['EMAIL', 'PUSH']);
    for (const row of rows) {
      expect(row.status).toBe('PENDING');
      expect(row.subject).toBe('RED flag: Dozer 7');
      expect(row.payload).toMatchObject({
        flagId,
        severity: 'RED',
        recipients: [{ userId: acme.userId, email: acme.email }],
      });
    }
  });
});

describe('GET /flags', () => {
  let fresh: TestTenant;
  let asset2: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    fresh = await t.tenant('Lister');
    const a1 = await makeAsset(t, fresh.key, { nickname: 'A1', assetClass: 'off-road' });
    asset2 = await makeAsset(t, fresh.key, { nickname: 'A2', assetClass: 'off-road' });
    ids.red = await makeFlag(t, fresh.key, a1, { severity: 'RED' });
    ids.yellow = await makeFlag(t, fresh.key, a1, { severity: 'YELLOW' });
    ids.other = await makeFlag(t, fresh.key, asset2, { severity: 'YELLOW' });
    ids.resolved = await makeFlag(t, fresh.key, asset2, { severity: 'YELLOW' });
    expect((await resolve(ids.resolved, { status: 'RESOLVED' }, fresh.key)).statusCode).toBe(200);
    ids.progress = await makeFlag(t, fresh.key, asset2, { severity: 'RED' });
    await t.db.prisma.flag.update({ where: { id: ids.progress }, data: { status: 'IN_PROGRESS' } });
  });
  const list = async (qs: string) => {
    const res = await t.api.get(`/api/v1/flags${qs}`, fresh.key);
    expect(res.statusCode).toBe(200);
    return res.json().flags.map((f: { id: string }) => f.id);
  };

  it('defaults to OPEN flags of every severity, newest first', async () => {
    expect(await list('')).toEqual([ids.other, ids.yellow, ids.red]);
  });

  it('filters by status CSV, severity CSV and assetId; unknown values are ignored', async () => {
    expect(await list('?status=RESOLVED')).toEqual([ids.resolved]);
    expect(await list('?status=open,IN_PROGRESS,bogus')).toEqual([ids.progress, ids.other, ids.yellow, ids.red]);
    expect(await list('?status=bogus')).toEqual([ids.other, ids.yellow, ids.red]);
    expect(await list('?severity=RED')).toEqual([ids.red]);
    expect(await list('?severity=RED,PURPLE&status=OPEN,IN_PROGRESS')).toEqual([ids.progress, ids.red]);
    expect(await list('?severity=PURPLE')).toEqual([ids.other, ids.yellow, ids.red]);
    expect(await list(`?assetId=${asset2}&status=OPEN,RESOLVED`)).toEqual([ids.resolved, ids.other]);
  });

  it('pages with a cursor and never shows another organisation', async () => {
    const first = (await t.api.get('/api/v1/flags?limit=2&status=OPEN,IN_PROGRESS,RESOLVED', fresh.key)).json();
    expect(first.flags).toHaveLength(2);
    const second = (
      await t.api.get(`/api/v1/flags?limit=2&status=OPEN,IN_PROGRESS,RESOLVED&cursor=${first.nextCursor}`, fresh.key)
    ).json();
    const third = (
      await t.api.get(`/api/v1/flags?limit=2&status=OPEN,IN_PROGRESS,RESOLVED&cursor=${second.nextCursor}`, fresh.key)
    ).json();
    const all = [...first.flags, ...second.flags, ...third.flags].map((f: { id: string }) => f.id);
    expect(new Set(all)).toEqual(new Set(Object.values(ids)));
    expect(third.nextCursor).toBeNull();
    expect((await t.api.get('/api/v1/flags?cursor=zzz', fresh.key)).statusCode).toBe(422);
  });
});

describe('PATCH /flags/:id (resolution)', () => {
  const SPECIFIC = 'Replaced the cracked hydraulic hose and topped up fluid';

  it('resolves a YELLOW flag, sets resolvedById/resolvedAt and emits flag.resolved', async () => {
    const { flagId } = (await raise({ assetId, severity: 'YELLOW' })).json();
    const res = await resolve(flagId, { status: 'RESOLVED', resolutionNote: 'Tightened' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, flagId, status: 'RESOLVED' });
    const flag = (await t.api.get(`/api/v1/flags/${flagId}`, acme.key)).json().flag;
    expect(flag).toMatchObject({
      status: 'RESOLVED',
      resolvedById: acme.userId,
      resolutionNote: 'Tightened',
      resolvedBy: { userId: acme.userId, name: 'Olive Ops' },
    });
    expect(Date.now() - Date.parse(flag.resolvedAt)).toBeLessThan(60_000);
    const event = (await eventsOf('flag.resolved')).find((e) => (e.data as { flagId: string }).flagId === flagId);
    expect(event?.data).toMatchObject({
      flagId,
      assetId,
      severity: 'YELLOW',
      resolutionNote: 'Tightened',
      resolvedBy: { userId: acme.userId, name: 'Olive Ops' },
      resolvedAt: flag.resolvedAt,
    });
  });

  it.each([['OPEN'], ['IN_PROGRESS'], ['CLOSED']])('accepts only RESOLVED: status %s is 422', async (status) => {
    const { flagId } = (await raise({ assetId, severity: 'YELLOW' })).json();
    const res = await resolve(flagId, { status });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.status).toMatch(/only RESOLVED/);
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flagId } })).status).toBe('OPEN');
  });

  it('requires status', async () => {
    const { flagId } = (await raise({ assetId, severity: 'YELLOW' })).json();
    const res = await resolve(flagId, { resolutionNote: 'Something' });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.status).toMatch(/required/);
  });

  it('RED needs returnToServiceConfirmed=true and a specific resolutionNote', async () => {
    const { flagId } = (await raise({ assetId, severity: 'RED' })).json();
    const cases: [unknown, string[]][] = [
      [{ status: 'RESOLVED' }, ['resolutionNote', 'returnToServiceConfirmed']],
      [{ status: 'RESOLVED', resolutionNote: SPECIFIC }, ['returnToServiceConfirmed']],
      [{ status: 'RESOLVED', resolutionNote: SPECIFIC, returnToServiceConfirmed: false }, ['returnToServiceConfirmed']],
      [{ status: 'RESOLVED', resolutionNote: 'fixed', returnToServiceConfirmed: true }, ['resolutionNote']],
      [
        { status: 'RESOLVED', resolutionNote: 'Fixed, all good now, done', returnToServiceConfirmed: true },
        ['resolutionNote'],
      ],
      [{ status: 'RESOLVED', resolutionNote: 'Replaced hose', returnToServiceConfirmed: true }, ['resolutionNote']],
      [{ status: 'RESOLVED', resolutionNote: '   ', returnToServiceConfirmed: true }, ['resolutionNote']],
    ];
    for (const [body, fields] of cases) {
      const res = await resolve(flagId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.json().fieldErrors).sort()).toEqual(fields);
    }
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flagId } })).status).toBe('OPEN');
    const ok = await resolve(flagId, { status: 'RESOLVED', resolutionNote: SPECIFIC, returnToServiceConfirmed: true });
    expect(ok.statusCode).toBe(200);
    expect(await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flagId } })).toMatchObject({
      status: 'RESOLVED',
      returnToServiceConfirmed: true,
      resolutionNote: SPECIFIC,
    });
  });

  it('resolves an IN_PROGRESS flag', async () => {
    const { flagId } = (await raise({ assetId, severity: 'YELLOW' })).json();
    await t.db.prisma.flag.update({ where: { id: flagId }, data: { status: 'IN_PROGRESS' } });
    expect((await resolve(flagId, { status: 'RESOLVED' })).statusCode).toBe(200);
  });

  it('refuses to re-open or re-resolve a resolved flag, without a second event', async () => {
    const { flagId } = (await raise({ assetId, severity: 'YELLOW' })).json();
    await resolve(flagId, { status: 'RESOLVED', resolutionNote: 'first' });
    const again = await resolve(flagId, { status: 'RESOLVED', resolutionNote: 'second' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ ok: false, error: 'flag_already_resolved' });
    const reopen = await resolve(flagId, { status: 'OPEN' });
    expect(reopen.statusCode).toBe(422);
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flagId } })).resolutionNote).toBe('first');
    expect(
      (await eventsOf('flag.resolved')).filter((e) => (e.data as { flagId: string }).flagId === flagId),
    ).toHaveLength(1);
  });

  it('answers 404 for an unknown id', async () => {
    expect((await resolve('nope', { status: 'RESOLVED' })).statusCode).toBe(404);
    expect((await t.api.get('/api/v1/flags/nope', acme.key)).statusCode).toBe(404);
  });
});

describe('flags raised from a repeated signal (dedupeKey)', () => {
  it('the database holds one open flag per asset and key; a resolved one makes room for the next', async () => {
    const row = (status: 'OPEN' | 'RESOLVED' = 'OPEN') =>
      t.db.prisma.flag.create({
        data: {
          orgId: acme.orgId,
          assetId,
          severity: 'YELLOW',
          raisedById: 'system',
          dedupeKey: 'fault:SPN-100',
          status,
        },
      });
    const first = await row();
    await expect(row()).rejects.toThrow();
    await t.db.prisma.flag.update({ where: { id: first.id }, data: { status: 'RESOLVED' } });
    const second = await row();
    expect(second.id).not.toBe(first.id);
    await row('RESOLVED');
  });
});
