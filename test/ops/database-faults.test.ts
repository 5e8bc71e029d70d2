import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { appOnDatabase, type AppOnDatabase } from '../helpers/app/test-app.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';
import { createTenant, type TestTenant } from '../helpers/app/tenants.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/net/tcp-proxy.ts';

// The proxy sits between the app and PostgreSQL; PGlite runs in-process and has no network to cut.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type ProxiedApp = AppOnDatabase;

async function proxiedApp(
  base: TestDatabase,
  proxy: TcpProxy,
  env: Record<string, string>,
  queryMs: number,
): Promise<ProxiedApp> {
  const url = new URL(base.url!);
  url.host = `127.0.0.1:${proxy.port}`;
  const db = await openDatabase({
    databaseUrl: url.toString(),
    dataDir: 'unused',
    poolSize: 4,
    timeouts: { connectMs: 500, statementMs: 1_000, idleInTransactionMs: 3_000, queryMs },
  });
  // A short key cache so the outage also hits authentication, as it does for keys not seen recently.
  return appOnDatabase(db, { AUTH_CACHE_TTL_MS: '0', ...env }, 'warn');
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const result = await fn();
  return [result, Date.now() - started];
}

describe.skipIf(!onPostgres)('PostgreSQL partitioned or refusing (TCP proxy in between)', () => {
  let base: TestDatabase;
  let proxy: TcpProxy;
  let t: ProxiedApp;
  let acme: TestTenant;
  const committed = async (prefix: string) =>
    (
      await base.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM assets WHERE nickname LIKE $1`, [
        `${prefix}%`,
      ])
    )[0].n;

  beforeAll(async () => {
    base = await createTestDatabase();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(base.url!).port || 5432) });
    acme = await createTenant(base);
    t = await proxiedApp(base, proxy, { REQUEST_TIMEOUT_MS: '10000' }, 1_500);
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await base?.close();
  });

  const create = (nickname: string) => t.api.post('/api/v1/assets', acme.key, { nickname, assetClass: 'trailer' });

  it('works through the proxy', async () => {
    expect((await create('healthy-1')).statusCode).toBe(201);
  });

  it('black-holed: every request is answered 503 database_unavailable within seconds, and nothing answered with an error commits later', async () => {
    await proxy.setMode('blackhole');
    const calls = [
      ...Array.from({ length: 6 }, (_, i) => () => create(`cut-${i}`)),
      () => t.api.get('/api/v1/assets', acme.key),
      () => t.api.get('/api/v1/me', acme.key),
    ];
    const results = await Promise.all(calls.map((call) => timed(call)));
    for (const [res, ms] of results) {
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ ok: false, error: 'database_unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      expect(ms).toBeLessThan(4_000);
    }
    // Heal the partition: whatever was still in flight is delivered now (as TCP would retransmit it).
    await proxy.setMode('pass');
    await sleep(1_000);
    expect(await committed('cut-')).toBe(0);
    // One warning for the outage, not an error line per request.
    expect(t.logs.filter((l) => l.level >= 50)).toEqual([]);
    expect(t.logs.filter((l) => l.msg === 'database unavailable; answering 503').length).toBeLessThanOrEqual(1);
  });

  it('a COMMIT caught in the partition is never delivered after the client got its 503', async () => {
    proxy.cutWhen((chunk) => chunk.includes('COMMIT'));
    const [res, ms] = await timed(() => create('commit-cut'));
    expect(proxy.mode).toBe('blackhole');
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json().error).toBe('database_unavailable');
    expect(ms).toBeLessThan(4_000);
    await proxy.setMode('pass');
    await sleep(1_000);
    expect(await committed('commit-cut')).toBe(0);
  });

  it('recovers by itself once the network is back', async () => {
    let res = await create('after-cut');
    for (let i = 0; i < 10 && res.statusCode !== 201; i++) {
      await sleep(300);
      res = await create('after-cut');
    }
    expect(res.statusCode, res.body).toBe(201);
    expect((await t.api.get('/api/v1/health')).statusCode).toBe(200);
  });

  it('refused: requests are answered 503 at once, and the app recovers', async () => {
    await proxy.setMode('refuse');
    const [res, ms] = await timed(() => create('refused-1'));
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json().error).toBe('database_unavailable');
    expect(res.headers['retry-after']).toBe('5');
    expect(ms).toBeLessThan(1_500);
    const health = await t.api.get('/api/v1/health');
    expect(health.statusCode).toBe(503);
    await proxy.setMode('pass');
    let again = await create('refused-2');
    for (let i = 0; i < 10 && again.statusCode !== 201; i++) {
      await sleep(300);
      again = await create('refused-2');
    }
    expect(again.statusCode, again.body).toBe(201);
    expect(await committed('refused-1')).toBe(0);
  });
});

describe.skipIf(!onPostgres)('the request deadline', () => {
  let base: TestDatabase;
  let proxy: TcpProxy;
  let t: ProxiedApp;
  let acme: TestTenant;

  beforeAll(async () => {
    base = await createTestDatabase();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(base.url!).port || 5432) });
    acme = await createTenant(base);
    // The query deadline is far away: only the request deadline can end these requests.
    t = await proxiedApp(base, proxy, { REQUEST_TIMEOUT_MS: '1000' }, 20_000);
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await base?.close();
  });

  it('answers 503 request_timeout when it passes, and the abandoned write never commits', async () => {
    expect((await t.api.post('/api/v1/assets', acme.key, { nickname: 'warm', assetClass: 'trailer' })).statusCode).toBe(
      201,
    );
    // Cut in the middle of the handler's transaction (after authentication, at the INSERT).
    proxy.cutWhen((chunk) => chunk.includes('INSERT INTO'));
    const [res, ms] = await timed(() =>
      t.api.post('/api/v1/assets', acme.key, { nickname: 'late-1', assetClass: 'trailer' }),
    );
    expect(proxy.mode).toBe('blackhole');
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toMatchObject({ ok: false, error: 'request_timeout' });
    expect(res.headers['retry-after']).toBe('5');
    expect(ms).toBeLessThan(2_500);
    await proxy.setMode('pass');
    await sleep(1_500);
    const rows = await base.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM assets WHERE nickname = 'late-1'`);
    expect(rows[0].n).toBe(0);
    const after = await t.api.post('/api/v1/assets', acme.key, { nickname: 'on-time', assetClass: 'trailer' });
    expect(after.statusCode, after.body).toBe(201);
  });
});
