import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { createMemoryStore, createRedisStore } from '../../src/http/rate-limit.ts';
import { awayFromMinuteBoundary } from '../helpers/app/minute-window.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '5' });
});
afterAll(() => t.close());

describe('per-key fixed window', () => {
  it('sends X-RateLimit headers on every authenticated response and 429 past the cap', async () => {
    await awayFromMinuteBoundary();
    const tenant = await t.tenant();
    const remaining: number[] = [];
    let reset = 0;
    for (let i = 0; i < 5; i++) {
      const res = await t.api.get('/api/v1/assets', tenant.key);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
      reset = Number(res.headers['x-ratelimit-reset']);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const nowSec = Math.floor(Date.now() / 1000);
    expect(reset % 60).toBe(0);
    expect(reset).toBeGreaterThan(nowSec - 1);
    expect(reset).toBeLessThanOrEqual(nowSec + 60);

    const limited = await t.api.get('/api/v1/assets', tenant.key);
    expect(limited.statusCode).toBe(429);
    const body = limited.json();
    expect(body).toMatchObject({ ok: false, error: 'rate_limited' });
    expect(Number.isInteger(body.retryAfterSec)).toBe(true);
    expect(limited.headers['retry-after']).toBe(String(body.retryAfterSec));
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-reset']).toBe(String(reset));
  });

  it('counts keys separately and honours a per-key cap', async () => {
    await awayFromMinuteBoundary();
    const tenant = await t.tenant();
    const big = await tenant.newKey({ rateLimit: 1000 });
    const res = await t.api.get('/api/v1/me', big.key);
    expect(res.headers['x-ratelimit-limit']).toBe('1000');
    expect(res.headers['x-ratelimit-remaining']).toBe('999');
    expect((await t.api.get('/api/v1/me', tenant.key)).headers['x-ratelimit-remaining']).toBe('4');
  });

  it('reports the same numbers on /me/usage as in its own headers (the call counts)', async () => {
    await awayFromMinuteBoundary();
    const tenant = await t.tenant();
    await t.api.get('/api/v1/me', tenant.key);
    const res = await t.api.get('/api/v1/me/usage', tenant.key);
    const { rateLimit, keyId } = res.json();
    expect(keyId).toBe(tenant.keyId);
    expect(rateLimit.limit).toBe(Number(res.headers['x-ratelimit-limit']));
    expect(rateLimit.remaining).toBe(Number(res.headers['x-ratelimit-remaining']));
    expect(rateLimit.remaining).toBe(3);
    expect(rateLimit.resetEpochSec).toBe(Number(res.headers['x-ratelimit-reset']));
    expect(rateLimit.windowSec).toBe(60);
    expect(rateLimit.resetIn).toBeGreaterThanOrEqual(0);
    expect(rateLimit.resetIn).toBeLessThanOrEqual(60);
  });

  it('does not rate-limit public endpoints', async () => {
    const res = await t.api.get('/api/v1/version');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('window stores', () => {
  it('memory store resets at the minute boundary', async () => {
    const store = createMemoryStore();
    const minute = 60_000 * 1000;
    expect((await store.hit('k', minute + 1)).count).toBe(1);
    expect((await store.hit('k', minute + 59_999)).count).toBe(2);
    const next = await store.hit('k', minute + 60_000);
    expect(next).toEqual({ count: 1, resetEpochSec: (minute + 120_000) / 1000 });
  });

  const redisUrl = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
  it('redis store shares counts between instances and expires the window', async () => {
    const probe = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await probe.connect();
    } catch {
      probe.disconnect();
      return expect.fail(`Redis is required at ${redisUrl} for this test`);
    }
    const a = createRedisStore(redisUrl);
    const b = createRedisStore(redisUrl);
    const keyId = `test-${Date.now()}-${Math.random()}`;
    const now = Date.now();
    await a.hit(keyId, now);
    const second = await b.hit(keyId, now);
    expect(second.count).toBe(2);
    expect((await a.peek(keyId, now)).count).toBe(2);
    const ttl = await probe.ttl(`fleet:rl:${keyId}:${Math.floor(now / 60_000)}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(65);
    await a.close();
    await b.close();
    probe.disconnect();
  });
});
