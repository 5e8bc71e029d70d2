import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { awayFromMinuteBoundary } from '../helpers/app/minute-window.ts';

const TOKEN = 'metrics-token-0123456789';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '1' });
});
afterAll(() => t.close());

describe('GET /metrics', () => {
  it('requires the metrics token', async () => {
    expect((await t.api.get('/metrics')).statusCode).toBe(401);
    expect((await t.api.get('/metrics', 'wrong-token-0123456789')).statusCode).toBe(401);
  });

  it('exposes request, latency, rate-limit, webhook queue and pool metrics in Prometheus format', async () => {
    const tenant = await t.tenant();
    await awayFromMinuteBoundary();
    await t.api.get('/api/v1/assets', tenant.key);
    await t.api.get('/api/v1/assets', tenant.key); // over the cap of 1
    const res = await t.api.get('/metrics', TOKEN);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/assets",status="200"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/assets",status="429"\} 1/);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/assets",status="200"\}/,
    );
    expect(text).toMatch(/rate_limit_rejections_total 1/);
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/assets",status="200"\} 1/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/v1\/assets",status="429"\} 1/,
    );
    expect(text).toMatch(/webhook_queue_depth \d+/);
    expect(text).toMatch(/webhook_oldest_due_age_seconds \d+/);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('records requests no route matched as unmatched, and HEAD apart from GET', async () => {
    await t.app.inject({ method: 'GET', url: '/no/such/path?x=1' });
    await t.app.inject({ method: 'HEAD', url: '/api/v1/health/live' });
    await t.app.inject({ method: 'GET', url: '/api/v1/health/live' });
    await t.app.inject({ method: 'GET', url: '/api/v1/health/live' });
    const text = (await t.api.get('/metrics', TOKEN)).body;
    expect(text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="HEAD",route="\/api\/v1\/health\/live",status="200"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/health\/live",status="200"\} 2/);
    // The sum of a histogram is the sum of the observed seconds: small, positive.
    const sum =
      /http_request_duration_seconds_sum\{method="GET",route="\/api\/v1\/health\/live",status="200"\} (\S+)/.exec(text);
    expect(Number(sum?.[1])).toBeGreaterThan(0);
    expect(Number(sum?.[1])).toBeLessThan(5);
  });

  it('counts webhook delivery outcomes and shows the queue', async () => {
    const tenant = await t.tenant();
    const { key } = await tenant.newKey({ rateLimit: 1000 });
    // Nothing listens on port 9 of loopback: the attempt fails and is re-queued.
    const sub = await t.api.post('/api/v1/webhooks', key, {
      url: 'https://127.0.0.1:9/hook',
      events: ['asset.created'],
    });
    expect(sub.statusCode, sub.body).toBe(201);
    await t.api.post('/api/v1/assets', key, { nickname: 'Metered', assetClass: 'trailer' });
    const summary = await t.deps.delivery.dispatcher.dispatchOnce();
    expect(summary.failed).toBe(1);
    const text = (await t.api.get('/metrics', TOKEN)).body;
    expect(text).toMatch(/webhook_deliveries_total\{outcome="failed"\} 1/);
    expect(text).toMatch(/webhook_queue_depth 1/);
  });
});

describe('without METRICS_TOKEN', () => {
  it('is not exposed at all, and nothing is collected', async () => {
    const off = await createTestApp();
    try {
      expect((await off.api.get('/metrics')).statusCode).toBe(404);
      expect(off.deps.metrics.registry).toBeNull();
    } finally {
      await off.close();
    }
  });
});
