import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/net/tcp-proxy.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Redis (rate-limit store) partitioned or refusing, behind a TCP proxy', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let acme: TestTenant;
  const freshKey = async () => (await acme.newKey()).key;
  const warnings = () =>
    t.logs.filter((l) => l.msg === 'rate-limit store unavailable; allowing requests without a limit until it is back');

  beforeAll(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    t = await createTestApp({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      REDIS_COMMAND_TIMEOUT_MS: '300',
      REDIS_BREAKER_INTERVAL_MS: '1000',
      RATE_LIMIT_PER_MINUTE: '3',
      LOG_LEVEL: 'info',
    });
    acme = await t.tenant();
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  const burst = async (key: string, n: number) => {
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < n; i++) statuses.push((await t.api.get('/api/v1/me', key)).statusCode);
    return { statuses, ms: Date.now() - started };
  };

  it('enforces the limit while Redis is healthy', async () => {
    const { statuses } = await burst(await freshKey(), 4);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it.each(['blackhole', 'refuse'] as const)(
    '%s: fails open at the cost of one timeout and one warning per interval, and is back within seconds',
    async (mode) => {
      const before = warnings().length;
      await proxy.setMode(mode);
      const key = await freshKey();
      const { statuses, ms } = await burst(key, 30);
      expect(statuses.every((s) => s === 200)).toBe(true); // fail-open, as documented
      // 30 requests, at most one 300 ms probe per 1 s interval: without the breaker this is 30 x 300 ms.
      expect(ms).toBeLessThan(2_500);
      expect(warnings().length - before).toBeLessThanOrEqual(Math.ceil(ms / 1000) + 1);
      expect(t.logs.filter((l) => Number(l.level) >= 50)).toEqual([]); // no error line (or stack trace) per request
      await proxy.setMode('pass');
      // Back within seconds: a new key is limited again.
      let limitedAgain = false;
      const deadline = Date.now() + 5_000;
      while (!limitedAgain && Date.now() < deadline) {
        const { statuses: again } = await burst(await freshKey(), 4);
        limitedAgain = again[3] === 429;
        if (!limitedAgain) await sleep(250);
      }
      expect(limitedAgain).toBe(true);
    },
  );
});
