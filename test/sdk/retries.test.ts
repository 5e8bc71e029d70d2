import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FleetApiError, FleetClient, FleetConnectionError, FleetTimeoutError } from '@fleet-ops/sdk';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { recordingFetch, startSdkServer, type SdkServer } from '../helpers/sdk/sdk-server.ts';

let s: SdkServer;
let tenant: TestTenant;

beforeAll(async () => {
  s = await startSdkServer();
  tenant = await s.t.tenant();
});
afterAll(() => s.close());
afterEach(() => vi.useRealTimers());

const countAssets = async (nickname: string) => {
  let n = 0;
  for await (const a of s.client(tenant.key).assets.listAll({ limit: 200 })) if (a.nickname === nickname) n++;
  return n;
};

describe('429', () => {
  it('waits Retry-After, then retries and succeeds', async () => {
    const limited = await tenant.newKey({ rateLimit: 1 });
    // Only Date is faked, and it keeps running: put "now" 1.2 s before a rate-limit window ends, so the
    // server's Retry-After is 1-2 s instead of up to a minute.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(Math.ceil(Date.now() / 60_000) * 60_000 + 60_000 - 1_200);
    const { impl, calls } = recordingFetch();
    const client = s.client(limited.key, { fetch: impl });
    await client.meta.getMe();
    const started = performance.now();
    const me = await client.meta.getMyUsage();
    const waited = performance.now() - started;
    expect(me.ok).toBe(true);
    expect(calls.map((c) => c.status)).toEqual([200, 429, 200]);
    expect(waited).toBeGreaterThanOrEqual(1_000);
  });

  it('throws the 429 with retryAfterSec when retries are off or the wait is too long', async () => {
    const limited = await tenant.newKey({ rateLimit: 1 });
    const { impl, calls } = recordingFetch();
    const client = s.client(limited.key, { fetch: impl, maxRetryAfterSec: 0 });
    await client.meta.getMe();
    const err = await client.meta.getMe().catch((e) => e);
    expect(err).toBeInstanceOf(FleetApiError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(err.retryAfterSec).toBeGreaterThanOrEqual(1);
    const again = await s
      .client(limited.key, { maxRetries: 0 })
      .meta.getMe()
      .catch((e) => e);
    expect(again).toMatchObject({ status: 429 });
    expect(calls).toHaveLength(2);
  });
});

describe('5xx and network errors', () => {
  it('retries a read after a 500 and after a refused connection', async () => {
    const { impl, calls } = recordingFetch((n) => (n === 2 ? 'fail-before' : 'pass'));
    const flaky: typeof fetch = (input, init) =>
      calls.length === 0
        ? (calls.push({ url: String(input), method: 'GET', headers: new Headers(), status: 500 }),
          Promise.resolve(Response.json({ ok: false, error: 'internal_error', requestId: 'r-1' }, { status: 500 })))
        : impl(input, init);
    const me = await s.client(tenant.key, { fetch: flaky }).meta.getMe();
    expect(me.organization.id).toBe(tenant.orgId);
    expect(calls).toHaveLength(3);
  });

  it('gives up after maxRetries with the last error', async () => {
    const { impl, calls } = recordingFetch(() => 'fail-before');
    const err = await s
      .client(tenant.key, { fetch: impl, maxRetries: 3 })
      .meta.getMe()
      .catch((e) => e);
    expect(err).toBeInstanceOf(FleetConnectionError);
    expect(calls).toHaveLength(4);
  });

  it('sends one Idempotency-Key per call, the same on every retry of it', async () => {
    const { impl, calls } = recordingFetch((n) => (n === 1 ? 'fail-before' : 'pass'));
    const client = s.client(tenant.key, { fetch: impl });
    await client.yards.create({ name: `Key yard ${Date.now()}` });
    await client.yards.create({ name: `Key yard 2 ${Date.now()}` });
    const keys = calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect((await client.meta.getMe(), calls[3].headers.get('idempotency-key'))).toBeNull();
  });

  it('never retries a write it cannot replay safely (idempotency keys off)', async () => {
    const { impl, calls } = recordingFetch((n) => (n === 1 ? 'lose-response' : 'pass'));
    const client = s.client(tenant.key, { fetch: impl, idempotencyKeys: false });
    const nickname = `Opt-out ${Date.now()}`;
    const err = await client.assets.create({ nickname, assetClass: 'trailer' }).catch((e) => e);
    expect(err).toBeInstanceOf(FleetConnectionError);
    expect(calls).toHaveLength(1);
    expect(calls[0].headers.get('idempotency-key')).toBeNull();
    expect(await countAssets(nickname)).toBe(1);
  });

  it('a retried meter reading is logged once (POST /hours honours Idempotency-Key since the seed)', async () => {
    const assetId = (
      await s.client(tenant.key).assets.create({ nickname: `Meter ${Date.now()}`, assetClass: 'off-road' })
    ).assetId;
    const { impl, calls } = recordingFetch((n) => (n === 1 ? 'lose-response' : 'pass'));
    const client = s.client(tenant.key, { fetch: impl });
    const log = await client.hours.create({ assetId, hoursReading: 120 });
    expect(calls.map((c) => c.status)).toEqual([201, 201]);
    const logs = await client.hours.list({ assetId });
    expect(logs.hoursLogs.map((l) => l.id)).toEqual([log.logId]);
  });
});

describe('timeouts and cancellation', () => {
  let hanging: Server;
  let hangingUrl: string;
  let requests = 0;
  beforeAll(async () => {
    // Counts requests and never answers them.
    hanging = createServer(() => requests++);
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hanging.closeAllConnections();
    await new Promise((r) => hanging.close(r));
  });

  it('times each attempt out and retries reads', async () => {
    requests = 0;
    const client = new FleetClient({
      apiKey: 'flt_x',
      baseUrl: hangingUrl,
      timeoutMs: 150,
      maxRetries: 1,
      retryBaseDelayMs: 10,
    });
    const err = await client.meta.getVersion().catch((e) => e);
    expect(err).toBeInstanceOf(FleetTimeoutError);
    // On a loaded machine the server may parse the second request after the client has already given up on it.
    await vi.waitFor(() => expect(requests).toBe(2), { timeout: 2_000 });
  });

  it('stops at once when the caller aborts', async () => {
    const client = new FleetClient({ apiKey: 'flt_x', baseUrl: hangingUrl, timeoutMs: 10_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user gave up')), 100);
    const started = performance.now();
    const err = await client.meta.getVersion({ signal: controller.signal }).catch((e) => e);
    expect(err).toMatchObject({ message: 'user gave up' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
