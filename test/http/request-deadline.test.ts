import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { holdWrite } from '../helpers/app/hold-write.ts';
import { lazyTracking } from '../../src/core/lazy-context.ts';
import { requestScopesTracked } from '../../src/db/request-scope.ts';

/**
 * A request whose deadline passes while its database work waits (here behind another transaction's table lock;
 * on PGlite behind any open transaction, its one connection) is answered 503 and must never commit afterwards,
 * on either engine, whether its work is a transaction, a request transaction (Idempotency-Key) or one
 * self-committing statement. The database is free for the next request at once.
 */
let t: TestApp;
let acme: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ REQUEST_TIMEOUT_MS: '400' });
  acme = await t.tenant();
  expect((await t.api.get('/api/v1/me', acme.key)).statusCode).toBe(200); // the key is now cached
});
afterAll(() => t.close());

const count = async (sql: string, params: unknown[]) => (await t.db.sql.query<{ n: number }>(sql, params))[0].n;

async function pastTheDeadline(table: string, send: () => Promise<{ statusCode: number; json(): any }>) {
  const held = await holdWrite(t, (tx) => tx.$executeRawUnsafe(`LOCK TABLE ${table} IN EXCLUSIVE MODE`));
  const started = Date.now();
  const res = await send();
  expect(res.statusCode).toBe(503);
  expect(res.json()).toMatchObject({ ok: false, error: 'request_timeout' });
  expect(Date.now() - started).toBeLessThan(1_500);
  // The waiting work gets its turn only now, well past the deadline.
  await held.release(200);
  await new Promise((r) => setTimeout(r, 300));
}

describe('the request deadline', () => {
  it('a transaction that waited past it rolls back', async () => {
    await pastTheDeadline('assets', () =>
      t.api.post('/api/v1/assets', acme.key, { nickname: 'late-plain', assetClass: 'trailer' }),
    );
    expect(await count(`SELECT count(*)::int AS n FROM assets WHERE nickname = 'late-plain'`, [])).toBe(0);
    const next = await t.api.post('/api/v1/assets', acme.key, { nickname: 'on-time', assetClass: 'trailer' });
    expect(next.statusCode).toBe(201);
  });

  it('a request transaction (Idempotency-Key) rolls back, and the key can be used again', async () => {
    const key = randomUUID();
    const send = () =>
      t.api.post(
        '/api/v1/assets',
        acme.key,
        { nickname: 'late-keyed', assetClass: 'trailer' },
        { 'idempotency-key': key },
      );
    await pastTheDeadline('assets', send);
    expect(await count(`SELECT count(*)::int AS n FROM assets WHERE nickname = 'late-keyed'`, [])).toBe(0);
    const retry = await send();
    expect(retry.statusCode).toBe(201);
    expect(await count(`SELECT count(*)::int AS n FROM assets WHERE nickname = 'late-keyed'`, [])).toBe(1);
  });

  it('a self-committing statement that waited past it does not run', async () => {
    await pastTheDeadline('work_orders', () => t.api.post('/api/v1/work-orders', acme.key, { title: 'late-order' }));
    expect(await count(`SELECT count(*)::int AS n FROM work_orders WHERE title = 'late-order'`, [])).toBe(0);
    const next = await t.api.post('/api/v1/work-orders', acme.key, { title: 'on-time order' });
    expect(next.statusCode).toBe(201);
    expect(next.json().number).toBe(1); // the late one took no number
  });
});

// From Node.js 24 on the storage is always enabled: tracking costs nothing there (src/core/lazy-context.ts).
describe.runIf(lazyTracking)('the scope of a request', () => {
  it('is made for requests that can change data only: reads never switch async context tracking on', async () => {
    await new Promise((r) => setTimeout(r, 1_200)); // the writes above are more than a second old
    expect(requestScopesTracked()).toBe(false);
    expect((await t.api.get('/api/v1/assets', acme.key)).statusCode).toBe(200);
    expect((await t.api.get('/api/v1/me', acme.key)).statusCode).toBe(200);
    expect(requestScopesTracked()).toBe(false);
    const created = await t.api.post('/api/v1/assets', acme.key, { nickname: 'scoped', assetClass: 'trailer' });
    expect(created.statusCode).toBe(201);
    expect(requestScopesTracked()).toBe(true);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(requestScopesTracked()).toBe(false);
  });
});
