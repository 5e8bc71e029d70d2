import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyring, parseEncryptionKeys, type EncryptionKey } from '../../../src/core/secret-keys.ts';
import { createSecretBox } from '../../../src/security/secret-box.ts';
import {
  resealTelematicsSecrets,
  secretSubject,
} from '../../../src/modules/telematics/telematics-secrets.repository.ts';
import { TEST_SECRETS_KEYS } from '../../helpers/run/test-env.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset, makeServiceReminder, makeServiceTask, makeYard } from '../../helpers/app/factories.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import {
  basicAuth,
  bearerIssued,
  fixture,
  guarded,
  json,
  startProvider,
  tokenEndpoint,
  xml,
  type FakeProvider,
} from '../../helpers/telematics/fake-provider.ts';
import { makeConnection, syncAndWait, telematicsApp } from '../../helpers/telematics/telematics-app.ts';

const CLIENT_SECRET = 'oauth-secret-Zq81kLmN';
const PASSWORD = 'basic-password-Yy72pQ';

let t: TestApp;
let provider: FakeProvider;
let acme: TestTenant;
let other: TestTenant;
let foreignConnection: string;
let foreignAsset: string;

beforeAll(async () => {
  provider = await startProvider();
  t = await telematicsApp(provider);
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  provider.routes.set('/oauth/token', tokenEndpoint('fleet-client', CLIENT_SECRET));
  const page = (name: string) => guarded(bearerIssued, () => xml(fixture(name, provider.origin)));
  provider.routes.set('/aemp/Fleet/1', page('iso-fleet-page-1.xml'));
  provider.routes.set('/aemp/Fleet/2', page('iso-fleet-page-2.xml'));
  provider.routes.set(
    '/Telematics/Fleet/0',
    guarded(basicAuth('jcma-user', PASSWORD), () => xml(fixture('jcma-fleet.xml', provider.origin))),
  );
  provider.routes.set('/v2/fleet', () => json(fixture('fleet-json-mixed-case.json', provider.origin)));
  foreignConnection = await makeConnection(t, other.key, { fleetUrl: `${provider.origin}/v2/fleet` });
  foreignAsset = await makeAsset(t, other.key, { vin: 'VCEC220EV00311' });
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

const oauth = () => ({
  type: 'oauth2-client-credentials',
  tokenUrl: `${provider.origin}/oauth/token`,
  clientId: 'fleet-client',
  clientSecret: CLIENT_SECRET,
  scope: 'fleet.read',
});

describe('connections', () => {
  it('creates, reads, lists, updates and deletes; secrets are write-only', async () => {
    const id = await makeConnection(t, acme.key, {
      name: 'VisionLink',
      fleetUrl: `${provider.origin}/aemp/Fleet/1`,
      auth: oauth(),
    });
    const got = (await t.api.get(`/api/v1/telematics/connections/${id}`, acme.key)).json().connection;
    expect(got).toMatchObject({
      connectionId: id,
      name: 'VisionLink',
      standard: 'iso-15143-3',
      auth: { type: 'oauth2-client-credentials', clientId: 'fleet-client', scope: 'fleet.read' },
      pollMinutes: 15,
      enabled: true,
      status: 'NEVER_RUN',
      lastRunAt: null,
    });
    const patched = await t.api.patch(`/api/v1/telematics/connections/${id}`, acme.key, {
      auth: { type: 'basic', username: 'u', password: PASSWORD },
      pollMinutes: 30,
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().connection).toMatchObject({ auth: { type: 'basic', username: 'u' }, pollMinutes: 30 });
    const list = (await t.api.get('/api/v1/telematics/connections', acme.key)).json();
    expect(list.connections.map((c: { connectionId: string }) => c.connectionId)).toContain(id);
    for (const body of [got, patched.json(), list]) {
      expect(JSON.stringify(body)).not.toContain(CLIENT_SECRET);
      expect(JSON.stringify(body)).not.toContain(PASSWORD);
    }
    expect((await t.api.delete(`/api/v1/telematics/connections/${id}`, acme.key)).statusCode).toBe(200);
    expect((await t.api.get(`/api/v1/telematics/connections/${id}`, acme.key)).statusCode).toBe(404);
  });

  it('never sends stored credentials to a new origin: moving fleetUrl elsewhere needs auth again', async () => {
    const id = await makeConnection(t, acme.key, {
      name: 'Moved',
      fleetUrl: `${provider.origin}/aemp/Fleet/1`,
      auth: { type: 'basic', username: 'u', password: PASSWORD },
    });
    const path = `/api/v1/telematics/connections/${id}`;
    const elsewhere = 'https://127.0.0.1:1/aemp/Fleet/1';
    const refused = await t.api.patch(path, acme.key, { fleetUrl: elsewhere });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().fieldErrors).toHaveProperty('auth');
    const sameOrigin = await t.api.patch(path, acme.key, { fleetUrl: `${provider.origin}/aemp/v2/Fleet/1` });
    expect(sameOrigin.statusCode).toBe(200);
    const withAuth = await t.api.patch(path, acme.key, {
      fleetUrl: elsewhere,
      auth: { type: 'basic', username: 'u2', password: 'another-secret' },
    });
    expect(withAuth.statusCode).toBe(200);
    expect(withAuth.json().connection.fleetUrl).toBe(elsewhere);
  });

  it.each([
    [{ fleetUrl: 'http://fleet.example.com/Fleet' }, 'fleetUrl'],
    [{ fleetUrl: `${'https://x'}`, standard: 'iso-15143-2' }, 'standard'],
    [{ auth: { type: 'basic', username: 'u' } }, 'auth.password'],
    [{ auth: { type: 'magic' } }, 'auth.type'],
    [{ pollMinutes: 5 }, 'pollMinutes'],
  ])('refuses %j with 422', async (body, field) => {
    const res = await t.api.post('/api/v1/telematics/connections', acme.key, {
      name: 'Bad',
      standard: 'iso-15143-3',
      fleetUrl: `${provider.origin}/aemp/Fleet/1`,
      auth: { type: 'none' },
      ...body,
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).join(',')).toContain(field.split('.')[0]);
  });

  it('answers one message for a feed or token URL that is not public or does not resolve', async () => {
    const strict = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    try {
      const tenant = await strict.tenant();
      const answers = [];
      for (const host of ['localhost', 'no-such-host.invalid']) {
        const res = await strict.api.post('/api/v1/telematics/connections', tenant.key, {
          name: 'Inside',
          standard: 'iso-15143-3',
          fleetUrl: `https://${host}/aemp/Fleet/1`,
          auth: { type: 'none' },
        });
        expect(res.statusCode).toBe(422);
        answers.push(res.json());
      }
      expect(answers[0]).toMatchObject({
        error: 'validation_failed',
        fieldErrors: { fleetUrl: 'must name a host that resolves to public addresses only' },
      });
      expect(answers[1]).toEqual(answers[0]);
    } finally {
      await strict.close();
    }
  });

  it('keeps secrets encrypted at rest: no table dump holds them', async () => {
    await makeConnection(t, acme.key, { fleetUrl: `${provider.origin}/aemp/Fleet/1`, auth: oauth() });
    await makeConnection(t, acme.key, {
      fleetUrl: `${provider.origin}/Telematics/Fleet/0`,
      auth: { type: 'bearer', token: 'bearer-token-Kk55' },
    });
    const tables = await t.db.sql.query<{ tablename: string }>(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`,
    );
    let dump = '';
    for (const { tablename } of tables) {
      const rows = await t.db.sql.query<{ r: string }>(`SELECT t::text AS r FROM "${tablename}" t`);
      dump += rows.map((r) => r.r).join('\n');
    }
    expect(dump).toContain('fleet-client');
    for (const s of [CLIENT_SECRET, PASSWORD, 'bearer-token-Kk55']) expect(dump).not.toContain(s);
    expect(JSON.stringify(t.logs)).not.toContain(CLIENT_SECRET);
  });

  it('re-encrypts connection secrets under a new first key (admin secrets rotate-key)', async () => {
    const id = await makeConnection(t, acme.key, {
      fleetUrl: `${provider.origin}/Telematics/Fleet/0`,
      auth: { type: 'basic', username: 'u', password: PASSWORD },
    });
    const old = parseEncryptionKeys(TEST_SECRETS_KEYS) as EncryptionKey[];
    const box = createSecretBox(createKeyring([{ id: 'next', key: randomBytes(32) }, ...old]));
    const result = await resealTelematicsSecrets(t.db, box);
    expect(result.failed).toEqual([]);
    const row = await t.db.prisma.telematicsConnection.findUniqueOrThrow({ where: { id } });
    expect(row.secretCiphertext).toMatch(/^v1:next:/);
    expect(box.openSecret(secretSubject(id), 'current', row.secretCiphertext!)).toBe(PASSWORD);
  });
});

describe('a sync over OAuth2 and two ISO pages', () => {
  let connectionId: string;
  let excavator: string;
  let dozer: string;
  let hauler: string;
  let reminder: string;

  beforeAll(async () => {
    excavator = await makeAsset(t, acme.key, { nickname: 'Excavator 7', vin: 'cat0320gczbk01234 ' });
    dozer = await makeAsset(t, acme.key, { nickname: 'Dozer 2', serial: 'WDN00450' });
    hauler = await makeAsset(t, acme.key, { nickname: 'Hauler 1', assetClass: 'on-road', serial: 'B1L00912' });
    await t.api.post('/api/v1/hours', acme.key, {
      assetId: excavator,
      hoursReading: 1240,
      loggedAt: '2026-11-20T01:00:00Z',
    });
    const task = await makeServiceTask(t, acme.key);
    // Counted from the asset's reading (1240): due at 1250, due soon from 1245.
    reminder = await makeServiceReminder(t, acme.key, excavator, task, { meterInterval: 10, dueSoonMeter: 5 });
    expect((await t.api.get(`/api/v1/service-reminders/${reminder}`, acme.key)).json().serviceReminder.status).toBe(
      'OK',
    );
    await makeYard(t, acme.key, { name: 'Trafalgar', lat: 51.508, lng: -0.128 });
    await makeYard(t, acme.key, { name: 'Bristol', lat: 51.45, lng: -2.59 });
    connectionId = await makeConnection(t, acme.key, {
      name: 'VisionLink',
      fleetUrl: `${provider.origin}/aemp/Fleet/1`,
      auth: oauth(),
    });
  });

  it('reads every page, matches machines, and records readings through the pipeline', async () => {
    const run = await syncAndWait(t, acme.key, connectionId);
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      pages: 2,
      equipmentSeen: 4,
      matched: 3,
      unmatched: 1,
      readingsCreated: 3,
      readingsSkipped: 0,
      faultsOpened: 2,
      error: null,
    });
    const logs = (await t.api.get(`/api/v1/hours?assetId=${excavator}`, acme.key)).json().hoursLogs;
    expect(logs[0]).toMatchObject({
      hoursReading: 1245.5,
      source: 'telematics',
      sourceId: connectionId,
      loggedAt: '2026-11-20T05:40:00.000Z',
    });
    const odo = (await t.api.get(`/api/v1/hours?assetId=${hauler}`, acme.key)).json().hoursLogs;
    expect(odo[0]).toMatchObject({ hoursReading: 10000, source: 'telematics' });
    const dozerLogs = (await t.api.get(`/api/v1/hours?assetId=${dozer}`, acme.key)).json().hoursLogs;
    expect(dozerLogs[0]).toMatchObject({ hoursReading: 3310.25 });
    const r = (await t.api.get(`/api/v1/service-reminders/${reminder}`, acme.key)).json().serviceReminder;
    expect(r.status).toBe('DUE_SOON');
    const events = await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'hours.logged' } });
    expect(events.filter((e) => (e.data as { source?: string }).source === 'telematics')).toHaveLength(3);
    const conn = (await t.api.get(`/api/v1/telematics/connections/${connectionId}`, acme.key)).json().connection;
    expect(conn).toMatchObject({ status: 'OK', lastError: null });
    expect(conn.lastSuccessAt).not.toBeNull();
  });

  it('opens one flag per asset and fault code, RED for high, YELLOW for medium, however often the feed repeats it', async () => {
    await syncAndWait(t, acme.key, connectionId);
    const flags = await t.db.prisma.flag.findMany({ where: { assetId: excavator, dedupeKey: { not: null } } });
    expect(flags.map((f) => [f.dedupeKey, f.severity]).sort()).toEqual([
      ['telematics-fault:E096-1', 'YELLOW'],
      ['telematics-fault:E360-2', 'RED'],
    ]);
    expect(flags.find((f) => f.severity === 'RED')!.note).toContain('Low engine oil pressure');
  });

  it('skips an unchanged feed: nothing stored, nothing for review', async () => {
    const before = await t.db.prisma.meterLog.count({ where: { orgId: acme.orgId } });
    const run = await syncAndWait(t, acme.key, connectionId);
    expect(run).toMatchObject({ status: 'SUCCEEDED', readingsCreated: 0, readingsSkipped: 3, faultsOpened: 0 });
    expect(await t.db.prisma.meterLog.count({ where: { orgId: acme.orgId } })).toBe(before);
  });

  it('lists machines, filters by matched, and links and unlinks by PUT', async () => {
    const base = `/api/v1/telematics/connections/${connectionId}/equipment`;
    const all = (await t.api.get(base, acme.key)).json().equipment;
    expect(all.map((e: { equipmentKey: string }) => e.equipmentKey).sort()).toEqual(
      ['CAT0320GCZBK01234', 'CAT0725CB1L00912', 'CAT:WDN00450', 'SPARE-01'].sort(),
    );
    const unmatched = (await t.api.get(`${base}?matched=false`, acme.key)).json().equipment;
    expect(unmatched).toEqual([expect.objectContaining({ equipmentKey: 'SPARE-01', assetId: null, linkMode: null })]);
    const spare = await makeAsset(t, acme.key, { nickname: 'Spare' });
    const linked = await t.api.raw('PUT', `${base}/SPARE-01`, acme.key, { assetId: spare });
    expect(linked.json().equipment).toMatchObject({ assetId: spare, linkMode: 'manual' });
    const taken = await t.api.raw('PUT', `${base}/SPARE-01`, acme.key, { assetId: excavator });
    expect(taken.statusCode).toBe(422);
    const foreign = await t.api.raw('PUT', `${base}/SPARE-01`, acme.key, { assetId: foreignAsset });
    expect(foreign.statusCode).toBe(422);
    const unlink = await t.api.raw('PUT', `${base}/${encodeURIComponent('CAT:WDN00450')}`, acme.key, { assetId: null });
    expect(unlink.json().equipment).toMatchObject({ assetId: null, linkMode: 'none' });
    await syncAndWait(t, acme.key, connectionId);
    const dozerRow = (await t.api.get(`${base}?matched=false`, acme.key)).json().equipment;
    expect(dozerRow.map((e: { equipmentKey: string }) => e.equipmentKey)).toEqual(['CAT:WDN00450']);
    expect((await t.api.raw('PUT', `${base}/NOPE`, acme.key, { assetId: null })).statusCode).toBe(404);
  });

  it('shows the asset its machine: position, meters, fuel, engine and the nearest yard', async () => {
    const res = await t.api.get(`/api/v1/assets/${excavator}/telematics`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json().telematics).toMatchObject({
      connectionId,
      equipmentKey: 'CAT0320GCZBK01234',
      location: { lat: 51.5079, lng: -0.1281, at: '2026-11-20T05:40:00.000Z' },
      operatingHours: { value: 1245.5 },
      idleHours: { value: 310.2 },
      odometer: null,
      fuelUsed: { value: 18450, unit: 'litre' },
      fuelRemainingPercent: { value: 62 },
      defRemainingPercent: { value: 80 },
      engineRunning: { value: false },
      nearestYard: { name: 'Trafalgar', distanceMeters: expect.any(Number) },
    });
    expect(res.json().telematics.nearestYard.distanceMeters).toBeLessThan(100);
    const none = await makeAsset(t, acme.key, { nickname: 'No machine' });
    expect((await t.api.get(`/api/v1/assets/${none}/telematics`, acme.key)).statusCode).toBe(404);
  });
});

describe('other feeds', () => {
  it('reads a JCMA single page behind Basic auth whose next points at itself', async () => {
    const asset = await makeAsset(t, acme.key, { nickname: 'Takeuchi', serial: '190502580' });
    const id = await makeConnection(t, acme.key, {
      fleetUrl: `${provider.origin}/Telematics/Fleet/0`,
      auth: { type: 'basic', username: 'jcma-user', password: PASSWORD },
    });
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({ status: 'SUCCEEDED', pages: 1, equipmentSeen: 2, matched: 1, readingsCreated: 1 });
    const tel = (await t.api.get(`/api/v1/assets/${asset}/telematics`, acme.key)).json().telematics;
    expect(tel).toMatchObject({
      operatingHours: { value: 233.7 },
      fuelRemainingPercent: null,
      engineRunning: { value: true },
    });
  });

  it('reads JSON with varied key case and counts bad values as machine errors, the rest proceeding', async () => {
    const asset = await makeAsset(t, acme.key, { nickname: 'Volvo EC220', vin: 'VCEC220EV00311' });
    const id = await makeConnection(t, acme.key, { fleetUrl: `${provider.origin}/v2/fleet` });
    const run = await syncAndWait(t, acme.key, id);
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      equipmentSeen: 3,
      readingsCreated: 1,
      faultsOpened: 1,
      machineErrors: 2,
    });
    expect(run.machineErrorSamples.join(' ')).toMatch(/not a number.*negative|negative.*not a number/);
    const flags = await t.db.prisma.flag.findMany({ where: { assetId: asset } });
    expect(flags).toEqual([
      expect.objectContaining({ severity: 'RED', dedupeKey: 'telematics-fault:MID128-PID100-FMI1' }),
    ]);
    // Tenancy: the same VIN in another organisation is never matched across.
    expect(await t.db.prisma.meterLog.count({ where: { assetId: foreignAsset } })).toBe(0);
  });
});

securitySuite('telematics', () => ({ t, tenant: acme }), [
  {
    label: 'POST /telematics/connections',
    method: 'POST',
    path: () => '/api/v1/telematics/connections',
    scope: 'telematics:write',
  },
  {
    label: 'GET /telematics/connections',
    method: 'GET',
    path: () => '/api/v1/telematics/connections',
    scope: 'telematics:read',
  },
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method) => ({
    label: `${method} /telematics/connections/:id`,
    method,
    path: () => `/api/v1/telematics/connections/${foreignConnection}`,
    scope: method === 'GET' ? ('telematics:read' as const) : ('telematics:write' as const),
    body: { name: 'x' },
    crossTenant: true,
  })),
  {
    label: 'POST /telematics/connections/:id/sync',
    method: 'POST',
    path: () => `/api/v1/telematics/connections/${foreignConnection}/sync`,
    scope: 'telematics:write',
    crossTenant: true,
  },
  {
    label: 'GET /telematics/connections/:id/runs',
    method: 'GET',
    path: () => `/api/v1/telematics/connections/${foreignConnection}/runs`,
    scope: 'telematics:read',
    crossTenant: true,
  },
  {
    label: 'GET /telematics/connections/:id/equipment',
    method: 'GET',
    path: () => `/api/v1/telematics/connections/${foreignConnection}/equipment`,
    scope: 'telematics:read',
    crossTenant: true,
  },
  {
    label: 'GET /assets/:id/telematics',
    method: 'GET',
    path: () => `/api/v1/assets/${foreignAsset}/telematics`,
    scope: 'assets:read',
    crossTenant: true,
  },
]);
