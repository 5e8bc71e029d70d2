import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimKey, pruneIdempotencyKeys } from '../../src/http/idempotency-store.ts';
import { buildApp } from '../../src/app.ts';
import { createDeps } from '../../src/composition.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { onPostgres } from '../helpers/db/test-database.ts';
import { makeAsset, makeWebhook } from '../helpers/app/factories.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
});
afterAll(() => t.close());

const withKey = (key: string) => ({ 'idempotency-key': key });
const post = (path: string, body: unknown, key: string, apiKey = tenant.key) =>
  t.api.post(`/api/v1${path}`, apiKey, body, withKey(key));
const count = async (sql: string, params: unknown[]) =>
  Number((await t.db.sql.query<{ n: number | string }>(sql, params))[0].n);
const assetsNamed = (nickname: string) =>
  count(`SELECT count(*) AS n FROM assets WHERE "orgId" = $1 AND nickname = $2`, [tenant.orgId, nickname]);
const eventsOf = (type: string) =>
  count(`SELECT count(*) AS n FROM events WHERE "orgId" = $1 AND type = $2`, [tenant.orgId, type]);

describe('Idempotency-Key on POST and PATCH', () => {
  it('replays the first response byte for byte with Idempotent-Replayed, and changes nothing', async () => {
    await makeWebhook(t, tenant.key, { events: ['asset.created', 'asset.updated'] });
    const key = randomUUID();
    const body = { nickname: 'Replay Dozer', assetClass: 'off-road' };
    const eventsBefore = await eventsOf('asset.created');
    const deliveriesBefore = await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE "orgId" = $1`, [
      tenant.orgId,
    ]);
    const first = await post('/assets', body, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/assets', body, key);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(await assetsNamed('Replay Dozer')).toBe(1);
    expect(await eventsOf('asset.created')).toBe(eventsBefore + 1);
    expect(await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE "orgId" = $1`, [tenant.orgId])).toBe(
      deliveriesBefore + 1,
    );
  });

  it('treats semantically equal JSON as the same body (key order, spacing, 1.0 = 1)', async () => {
    const key = randomUUID();
    const first = await post('/assets', { nickname: 'Equal JSON', assetClass: 'off-road', purchasePrice: 1 }, key);
    expect(first.statusCode).toBe(201);
    const again = await t.api.raw(
      'POST',
      '/api/v1/assets',
      tenant.key,
      '{ "purchasePrice": 1.0,\n "assetClass": "off-road", "nickname": "Equal JSON" }',
      withKey(key),
    );
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('answers 422 idempotency_key_reused for another body, path or method with the same key', async () => {
    const key = randomUUID();
    const assetId = (await post('/assets', { nickname: 'Reuse 1', assetClass: 'off-road' }, key)).json().assetId;
    const otherBody = await post('/assets', { nickname: 'Reuse 2', assetClass: 'off-road' }, key);
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
    expect(otherBody.json().fieldErrors).toHaveProperty('Idempotency-Key');
    const otherPath = await post('/yards', { name: 'Reuse yard' }, key);
    expect(otherPath.json().error).toBe('idempotency_key_reused');
    const otherMethod = await t.api.raw(
      'PATCH',
      `/api/v1/assets/${assetId}`,
      tenant.key,
      { nickname: 'x' },
      withKey(key),
    );
    expect(otherMethod.statusCode).toBe(422);
    expect(otherMethod.json().error).toBe('idempotency_key_reused');
    expect(await assetsNamed('Reuse 2')).toBe(0);
    expect(
      await count(`SELECT count(*) AS n FROM yards WHERE "orgId" = $1 AND name = 'Reuse yard'`, [tenant.orgId]),
    ).toBe(0);
  });

  it('20 parallel requests with one key make one change; the rest are replays or 409 with Retry-After', async () => {
    const key = randomUUID();
    const body = { nickname: 'Parallel Dozer', assetClass: 'off-road' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/assets', body, key)));
    const fresh = answers.filter((r) => r.statusCode === 201 && !r.headers['idempotent-replayed']);
    const replays = answers.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === 'true');
    const busy = answers.filter((r) => r.statusCode === 409);
    expect(fresh).toHaveLength(1);
    expect(fresh.length + replays.length + busy.length).toBe(20);
    for (const r of replays) expect(r.body).toBe(fresh[0].body);
    for (const r of busy) {
      expect(r.json().error).toBe('idempotency_key_in_use');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(await assetsNamed('Parallel Dozer')).toBe(1);
    // After the first finished, every retry replays.
    const late = await post('/assets', body, key);
    expect(late.headers['idempotent-replayed']).toBe('true');
    expect(late.body).toBe(fresh[0].body);
  });

  it.runIf(onPostgres)('two instances on one database: 20 requests split between them make one change', async () => {
    // A second app with its own pool: nothing of the mechanism lives in memory, the claim row decides.
    const db2 = await openDatabase({ databaseUrl: t.db.url, dataDir: 'unused', poolSize: 10 });
    const deps2 = createDeps(t.deps.config, db2, t.deps.logger);
    const app2 = await buildApp(deps2);
    try {
      const key = randomUUID();
      const payload = JSON.stringify({ nickname: 'Two instances', assetClass: 'off-road' });
      const call = (app: typeof app2, i: number) =>
        app
          .inject({
            method: 'POST',
            url: '/api/v1/assets',
            headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', ...withKey(key) },
            payload,
          })
          .then((r) => ({ r, i }));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? app2 : t.app, i)));
      const fresh = answers.filter(({ r }) => r.statusCode === 201 && !r.headers['idempotent-replayed']);
      expect(fresh).toHaveLength(1);
      for (const { r } of answers) expect([201, 409]).toContain(r.statusCode);
      expect(await assetsNamed('Two instances')).toBe(1);
    } finally {
      await app2.close();
      await deps2.close();
      await db2.close();
    }
  });

  it('keys are per API key: the same key from another key of the organisation is another request', async () => {
    const other = await tenant.newKey();
    const key = randomUUID();
    const body = { nickname: 'Scoped Dozer', assetClass: 'off-road' };
    expect((await post('/assets', body, key)).statusCode).toBe(201);
    const second = await post('/assets', body, key, other.key);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(await assetsNamed('Scoped Dozer')).toBe(2);
  });

  it('stores a 4xx the operation answered (PATCH of an unknown asset) and replays it', async () => {
    const key = randomUUID();
    const first = await t.api.raw('PATCH', '/api/v1/assets/no-such-asset', tenant.key, { nickname: 'x' }, withKey(key));
    expect(first.statusCode).toBe(404);
    const again = await t.api.raw('PATCH', '/api/v1/assets/no-such-asset', tenant.key, { nickname: 'x' }, withKey(key));
    expect(again.statusCode).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('a PATCH replay does not apply the change twice (no second event)', async () => {
    const assetId = await makeAsset(t, tenant.key, { nickname: 'Patch me' });
    const key = randomUUID();
    const before = await eventsOf('asset.updated');
    const patch = () =>
      t.api.raw('PATCH', `/api/v1/assets/${assetId}`, tenant.key, { nickname: 'Patched once' }, withKey(key));
    const first = await patch();
    expect(first.statusCode).toBe(200);
    await t.db.sql.query(`UPDATE assets SET nickname = 'Changed meanwhile' WHERE id = $1`, [assetId]);
    const again = await patch();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await eventsOf('asset.updated')).toBe(before + 1);
    expect(await assetsNamed('Changed meanwhile')).toBe(1);
  });

  it('schema validation failures, 401 and 403 happen before execution and leave the key unused', async () => {
    const key = randomUUID();
    const invalid = await post('/assets', { assetClass: 'off-road' }, key);
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().error).toBe('validation_failed');
    const readOnly = await tenant.newKey({ scopes: 'assets:read' });
    expect((await post('/assets', { nickname: 'Before', assetClass: 'off-road' }, key, readOnly.key)).statusCode).toBe(
      403,
    );
    expect((await post('/assets', { nickname: 'Before', assetClass: 'off-road' }, key, 'flt_nope')).statusCode).toBe(
      401,
    );
    const valid = await post('/assets', { nickname: 'Before', assetClass: 'off-road' }, key);
    expect(valid.statusCode).toBe(201);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a 5xx is not stored: the key is released and the retry executes', async () => {
    const assets = t.deps.services.assets;
    const create = assets.create;
    let failures = 1;
    assets.create = async (...args: Parameters<typeof create>) => {
      if (failures-- > 0) throw new Error('simulated failure');
      return create(...args);
    };
    try {
      const key = randomUUID();
      const body = { nickname: 'After 500', assetClass: 'off-road' };
      expect((await post('/assets', body, key)).statusCode).toBe(500);
      const retry = await post('/assets', body, key);
      expect(retry.statusCode).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await assetsNamed('After 500')).toBe(1);
    } finally {
      assets.create = create;
    }
  });

  it('a change that fails rolls back with its record: nothing half-done is kept', async () => {
    // The handler's change commits only with its record: a failure after the insert (here, in the
    // serialiser's place) leaves neither the asset nor a record, and the retry creates the asset once.
    const assets = t.deps.services.assets;
    const create = assets.create;
    let failures = 1;
    assets.create = async (...args: Parameters<typeof create>) => {
      const result = await create(...args);
      if (failures-- > 0) throw new Error('failure after the insert');
      return result;
    };
    try {
      const key = randomUUID();
      const body = { nickname: 'Rolled back', assetClass: 'off-road' };
      expect((await post('/assets', body, key)).statusCode).toBe(500);
      expect(await assetsNamed('Rolled back')).toBe(0);
      expect((await post('/assets', body, key)).statusCode).toBe(201);
      expect(await assetsNamed('Rolled back')).toBe(1);
    } finally {
      assets.create = create;
    }
  });

  it('a crash between commit and response: the retry gets the stored response', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    let crashes = 1;
    t.deps.testHooks.afterIdempotentCommit = (request) => {
      if (crashes-- <= 0) return;
      // The process "dies" after COMMIT: the connection drops with no answer, then the handler fails.
      request.raw.socket.destroy();
      throw new Error('simulated crash after commit');
    };
    try {
      const key = randomUUID();
      const call = () =>
        fetch(`${address}/api/v1/assets`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tenant.key}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify({ nickname: 'Crash Dozer', assetClass: 'off-road' }),
        });
      await expect(call()).rejects.toThrow();
      expect(await assetsNamed('Crash Dozer')).toBe(1);
      const retry = await call();
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const [row] = await t.db.sql.query<{ id: string }>(
        `SELECT id FROM assets WHERE "orgId" = $1 AND nickname = 'Crash Dozer'`,
        [tenant.orgId],
      );
      expect(await retry.json()).toMatchObject({ ok: true, assetId: row.id });
      expect(await assetsNamed('Crash Dozer')).toBe(1);
    } finally {
      t.deps.testHooks.afterIdempotentCommit = undefined;
    }
  });

  it('refuses keys longer than 128 characters or empty (422 on Idempotency-Key)', async () => {
    const long = await post('/assets', { nickname: 'Long', assetClass: 'off-road' }, 'k'.repeat(129));
    expect(long.statusCode).toBe(422);
    expect(long.json().fieldErrors).toHaveProperty('Idempotency-Key');
    const max = await post('/assets', { nickname: 'Max key', assetClass: 'off-road' }, 'k'.repeat(128));
    expect(max.statusCode).toBe(201);
  });

  it('POST /hours keeps its own semantics: another body with the same key returns the original logId', async () => {
    const assetId = await makeAsset(t, tenant.key);
    const key = randomUUID();
    const first = await post('/hours', { assetId, hoursReading: 10 }, key);
    expect(first.statusCode).toBe(201);
    const again = await post('/hours', { assetId, hoursReading: 20 }, key);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ logId: first.json().logId, replayed: true });
  });

  it('a batch and nested transactions keep their own rollback inside the request transaction', async () => {
    const assetId = await makeAsset(t, tenant.key);
    const key = randomUUID();
    const entries = [
      { assetId, hoursReading: 100, clientMutationId: `${key}-a` },
      { assetId: 'no-such-asset', hoursReading: 5 },
      { assetId, hoursReading: 110, clientMutationId: `${key}-b` },
    ];
    const first = await post('/hours/batch', entries, key);
    expect(first.statusCode).toBe(200);
    expect(first.json().summary).toMatchObject({ succeeded: 2, failed: 1 });
    const again = await post('/hours/batch', entries, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await count(`SELECT count(*) AS n FROM meter_logs WHERE "assetId" = $1`, [assetId])).toBe(2);
  });
});

describe('idempotency records', () => {
  const scope = () => ({ orgId: tenant.orgId, apiKeyId: tenant.keyId, key: randomUUID() });
  const request = { fingerprint: 'f', method: 'POST', path: '/api/v1/assets' };

  it('a running claim is 409 until its lease ends, then a retry takes it over', async () => {
    const s = scope();
    expect((await claimKey(t.db, s, { ...request, leaseMs: 60_000 })).kind).toBe('claimed');
    expect(await claimKey(t.db, s, { ...request, leaseMs: 60_000 })).toMatchObject({ kind: 'in_use' });
    const expired = scope();
    expect((await claimKey(t.db, expired, { ...request, leaseMs: -1 })).kind).toBe('claimed');
    expect((await claimKey(t.db, expired, { ...request, leaseMs: 60_000 })).kind).toBe('claimed');
    expect((await claimKey(t.db, expired, { ...request, fingerprint: 'g', leaseMs: 60_000 })).kind).toBe('reused');
  });

  it('the retention job removes records older than the TTL', async () => {
    const s = scope();
    await claimKey(t.db, s, { ...request, leaseMs: -1 });
    const before = await count(`SELECT count(*) AS n FROM idempotency_keys`, []);
    const later = new Date(Date.now() + 25 * 3600 * 1000);
    const { keys } = await pruneIdempotencyKeys(t.db, later, 24);
    expect(keys).toBeGreaterThanOrEqual(1);
    expect(await count(`SELECT count(*) AS n FROM idempotency_keys`, [])).toBe(before - keys);
    expect((await pruneIdempotencyKeys(t.db, new Date(), 24)).keys).toBe(0);
  });
});
