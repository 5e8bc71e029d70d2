import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { makeAsset, makeTool } from '../helpers/app/factories.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { awayFromMinuteBoundary } from '../helpers/app/minute-window.ts';
import { generateApiKey } from '../../src/core/api-keys.ts';
import { MAX_NESTING_DEPTH } from '../../src/core/input-guard.ts';
import Fastify from 'fastify';
import { registerErrorHandling, registerShutdownRefusal } from '../../src/http/error-handler.ts';

let t: TestApp;
let acme: TestTenant;
let assetId: string;
let toolId: string;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
  assetId = await makeAsset(t, acme.key, { nickname: 'Hardy', assetClass: 'off-road' });
  toolId = await makeTool(t, acme.key, { name: 'Drill', pmIntervalDays: 30 });
});
afterAll(() => t.close());

const envelope = (res: { json: () => any }) =>
  expect(res.json()).toMatchObject({ ok: false, error: expect.any(String) });

describe('deeply nested JSON', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const nestedObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

  it.each([5_000, 100_000])(
    'a body nested %i levels is 422 naming the field, never a stack overflow',
    async (depth) => {
      for (const body of [nested(depth), `{"nickname":"x","assetClass":"trailer","meta":${nestedObject(depth)}}`]) {
        const res = await t.api.post('/api/v1/assets', acme.key, body);
        expect(res.statusCode, res.body.slice(0, 200)).toBe(422);
        expect(Object.values(res.json().fieldErrors)[0]).toMatch(/nested too deeply/);
      }
    },
  );

  it(`accepts nesting up to ${MAX_NESTING_DEPTH} levels in the guard (the schema decides the rest)`, async () => {
    const res = await t.api.post(
      '/api/v1/assets',
      acme.key,
      `{"nickname":"x","assetClass":"trailer","meta":${nestedObject(MAX_NESTING_DEPTH - 2)}}`,
    );
    expect(res.statusCode).not.toBe(500);
    expect(res.json().fieldErrors?.meta ?? '').not.toMatch(/nested too deeply/);
  });
});

describe('text that cannot be stored: one rule everywhere (422 naming the field)', () => {
  const lone = 'x\ud800';
  it.each([
    ['tool checkout note', () => `/api/v1/tools/${toolId}/checkout`, { note: lone }, 'note'],
    ['tool check-in note', () => `/api/v1/tools/${toolId}/checkin`, { note: lone }, 'note'],
    ['tool report description', () => `/api/v1/tools/${toolId}/report`, { description: lone }, 'description'],
    ['tool mark-serviced note', () => `/api/v1/tools/${toolId}/mark-serviced`, { note: lone }, 'note'],
    ['asset check-in note', () => `/api/v1/assets/${assetId}/checkin`, { note: lone }, 'note'],
    ['asset nickname', () => '/api/v1/assets', { nickname: lone, assetClass: 'trailer' }, 'nickname'],
    ['a trailing low surrogate', () => '/api/v1/assets', { nickname: '\udc00y', assetClass: 'trailer' }, 'nickname'],
    ['a property name', () => '/api/v1/assets', { nickname: 'ok', assetClass: 'trailer', [lone]: 1 }, 'body'],
  ])('%s', async (_name, url, body, field) => {
    const res = await t.api.post(url(), acme.key, body);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().fieldErrors[field]).toMatch(/surrogate/);
  });

  it('keeps valid surrogate pairs (emoji) intact', async () => {
    const res = await t.api.post('/api/v1/assets', acme.key, { nickname: 'Truck 🚚', assetClass: 'trailer' });
    expect(res.statusCode).toBe(201);
    const read = await t.api.get(`/api/v1/assets/${res.json().assetId}`, acme.key);
    expect(read.body).toContain('Truck 🚚');
  });

  it('an escaped lone surrogate in raw JSON is refused the same way', async () => {
    const res = await t.api.post('/api/v1/assets', acme.key, '{"nickname":"a\\ud800b","assetClass":"trailer"}');
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('nickname');
  });
});

describe('framework errors in the API envelope', () => {
  it('ids far longer than 500 characters are 404', async () => {
    for (const id of ['z'.repeat(501), 'z'.repeat(4_000)]) {
      const res = await t.api.get(`/api/v1/assets/${id}`, acme.key);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
  });

  it('413 and 415 and unknown routes', async () => {
    const big = await t.api.post('/api/v1/assets', acme.key, JSON.stringify({ nickname: 'x'.repeat(1_100_000) }));
    expect(big.statusCode).toBe(413);
    envelope(big);
    const text = await t.api.raw('POST', '/api/v1/assets', acme.key, undefined, { 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(415);
    envelope(text);
    const missing = await t.api.get('/api/v1/nope', acme.key);
    expect(missing.statusCode).toBe(404);
    envelope(missing);
  });

  it('431 for oversized headers, over a real socket', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (t.app.server.address() as AddressInfo).port;
      const res = await new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
        const req = http.get(
          { host: '127.0.0.1', port, path: '/api/v1/health', headers: { 'x-big': 'a'.repeat(20_000) } },
          (r) => {
            let body = '';
            r.on('data', (d) => (body += d));
            r.on('end', () => resolve({ status: r.statusCode!, body, type: String(r.headers['content-type']) }));
          },
        );
        req.on('error', reject);
      });
      expect(res.status).toBe(431);
      expect(res.type).toMatch(/application\/json/);
      expect(JSON.parse(res.body)).toEqual({ ok: false, error: 'headers_too_large', message: expect.any(String) });
    } finally {
      await t.app.server.close();
    }
  });
});

describe('authentication lookups per client address', () => {
  it('limits made-up keys before they reach the database; cached keys are not counted', async () => {
    const limitedApp = await createTestApp({ PRE_AUTH_RATE_LIMIT_PER_MINUTE: '5' });
    const t = limitedApp;
    const acme = await t.tenant();
    // The limit counts in clock-aligned minutes: all of this test's lookups must fall in one.
    await awayFromMinuteBoundary(15_000);
    expect((await t.api.get('/api/v1/me', acme.key)).statusCode).toBe(200); // one lookup, then cached
    const original = t.db.sql.query;
    let lookups = 0;
    (t.db.sql as any).query = (...args: any[]) => {
      if (args[2] === 'auth_key_lookup') lookups += 1;
      return (original as any).apply(t.db.sql, args);
    };
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++)
        statuses.push(
          (await t.api.get('/api/v1/me', generateApiKey(), { 'x-forwarded-for': `10.0.0.${i}` })).statusCode,
        );
      // X-Forwarded-For is ignored without TRUST_PROXY: all 12 come from one address.
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5)).toEqual(Array(7).fill(429));
      expect(lookups).toBe(5);
      const limited = await t.api.get('/api/v1/me', generateApiKey());
      expect(limited.json()).toMatchObject({ ok: false, error: 'rate_limited', retryAfterSec: expect.any(Number) });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // A key verified before (cached) costs no lookup and is not limited.
      expect((await t.api.get('/api/v1/me', acme.key)).statusCode).toBe(200);
    } finally {
      (t.db.sql as any).query = original;
      await limitedApp.close();
    }
  });

  it('never refuses valid keys, re-verified or new, even from an address flooding made-up keys', async () => {
    // 200 keys re-verified on nearly every request from one address, well past the limit's count of lookups.
    const app = await createTestApp({ PRE_AUTH_RATE_LIMIT_PER_MINUTE: '100', AUTH_CACHE_TTL_MS: '1' });
    try {
      const tenant = await app.tenant();
      const keys = [tenant.key];
      while (keys.length < 200)
        keys.push(...(await Promise.all(Array.from({ length: 20 }, () => tenant.newKey()))).map((k) => k.key));
      keys.length = 200;
      const original = app.db.sql.query;
      let lookups = 0;
      (app.db.sql as any).query = (...args: any[]) => {
        if (args[2] === 'auth_key_lookup') lookups += 1;
        return (original as any).apply(app.db.sql, args);
      };
      const statuses = async (list: string[]) => {
        const out: number[] = [];
        for (let i = 0; i < list.length; i += 25)
          out.push(
            ...(await Promise.all(list.slice(i, i + 25).map((k) => app.api.get('/api/v1/me', k)))).map(
              (r) => r.statusCode,
            ),
          );
        return out;
      };
      const count = (list: number[], status: number) => list.filter((s) => s === status).length;
      try {
        const valid = await statuses([...keys, ...keys]);
        expect(lookups).toBeGreaterThan(100);
        expect(count(valid, 200)).toBe(400);
        // The same address now floods made-up keys: 100 are looked up (401), the rest refused without a lookup.
        // From here on every request must fall in one limit window (valid keys above were never counted).
        await awayFromMinuteBoundary(30_000);
        lookups = 0;
        const flood = await statuses(Array.from({ length: 150 }, () => generateApiKey()));
        // Exactly 100 lookups ran; a lookup that failed for want of a database connection (a pooler queue on a
        // loaded machine answers 5xx) still counts against the address, as a made-up key's would.
        expect(count(flood, 429)).toBe(50);
        expect(lookups).toBe(100);
        expect(flood.filter((s) => s !== 401 && s !== 429).every((s) => s >= 500)).toBe(true);
        // Its valid keys still pass, and so does one issued after the flood began (never seen by this process).
        const fresh = await tenant.newKey();
        const afterFlood = await statuses([...keys, fresh.key]);
        expect(count(afterFlood, 200)).toBe(201);
        expect((await app.api.get('/api/v1/me', generateApiKey())).statusCode).toBe(429);
        // A revoked key is 401 once, then refused with the made-up ones.
        await app.db.prisma.apiKey.update({ where: { id: fresh.id }, data: { revokedAt: new Date() } });
        await new Promise((r) => setTimeout(r, 5));
        expect((await app.api.get('/api/v1/me', fresh.key)).statusCode).toBe(401);
        // Past the cache's TTL, so that the revoked answer is not served from the cache again.
        await new Promise((r) => setTimeout(r, 5));
        expect((await app.api.get('/api/v1/me', fresh.key)).statusCode).toBe(429);
      } finally {
        (app.db.sql as any).query = original;
      }
    } finally {
      await app.close();
    }
  }, 90_000);

  it('with TRUST_PROXY, the client address comes from X-Forwarded-For', async () => {
    const proxied = await createTestApp({ PRE_AUTH_RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1' });
    await awayFromMinuteBoundary(15_000);
    try {
      const from = (ip: string) => proxied.api.get('/api/v1/me', generateApiKey(), { 'x-forwarded-for': ip });
      expect([
        (await from('203.0.113.1')).statusCode,
        (await from('203.0.113.1')).statusCode,
        (await from('203.0.113.1')).statusCode,
      ]).toEqual([401, 401, 429]);
      expect((await from('203.0.113.2')).statusCode).toBe(401);
    } finally {
      await proxied.close();
    }
  });
});

describe('shutting down', () => {
  it('answers 503 shutting_down in the API envelope with Retry-After', async () => {
    const app = Fastify({ return503OnClosing: false });
    registerShutdownRefusal(app);
    registerErrorHandling(app);
    // Slow enough that the second request reaches the server while the first is still running, even on a busy machine.
    let slowStarted!: () => void;
    const running = new Promise<void>((resolve) => (slowStarted = resolve));
    app.get('/slow', async () => {
      slowStarted();
      await new Promise((r) => setTimeout(r, 1_500));
      return { ok: true };
    });
    app.get('/api/v1/version', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    // A second request on a busy kept-alive connection arrives after shutdown has started.
    const socket = net.connect(port, '127.0.0.1');
    let raw = '';
    socket.on('data', (d) => (raw += d));
    const ended = new Promise<void>((resolve) => {
      socket.on('close', () => resolve());
      socket.on('data', () =>
        raw.split('HTTP/1.1 ').length > 2 && raw.trimEnd().endsWith('}') ? resolve() : undefined,
      );
    });
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    // Shutdown starts once the first request is being handled, however long it took to arrive.
    await running;
    const closed = app.close();
    await new Promise((r) => setTimeout(r, 20));
    socket.write('GET /api/v1/version HTTP/1.1\r\nHost: x\r\n\r\n');
    await ended;
    socket.destroy();
    await closed;
    const second = raw.slice(raw.indexOf('HTTP/1.1', 10));
    expect(second).toMatch(/^HTTP\/1.1 503/);
    expect(second).toMatch(/retry-after: 5/i);
    expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toMatchObject({
      ok: false,
      error: 'shutting_down',
    });
  });
});

describe('clamped text never splits a surrogate pair', () => {
  const note = 'a'.repeat(499) + '😀' + 'tail';
  it.each([
    [
      'asset check-in note',
      () =>
        t.api
          .post(`/api/v1/assets/${assetId}/checkout`, acme.key, { toUserId: acme.userId })
          .then(() => t.api.post(`/api/v1/assets/${assetId}/checkin`, acme.key, { note })),
    ],
    ['tool mark-serviced note', () => t.api.post(`/api/v1/tools/${toolId}/mark-serviced`, acme.key, { note })],
  ])('%s cut at 500 characters', async (_name, call) => {
    const res = await call();
    expect([200, 201], res.body).toContain(res.statusCode);
  });
});
