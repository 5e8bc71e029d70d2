import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';

let t: TestApp;
let acme: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: 'info' });
  acme = await t.tenant();
});
afterAll(() => t.close());

describe('CORS (spec rule 7)', () => {
  it('answers preflight for any origin with the allowed methods, headers and a day of caching', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/assets',
      headers: {
        origin: 'https://dashboard.example.com',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization,content-type,idempotency-key',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toBe('GET, POST, PATCH, DELETE, OPTIONS');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const h of [
      'authorization',
      'content-type',
      'idempotency-key',
      'x-service-signature',
      'x-service-timestamp',
      'x-service-event',
    ]) {
      expect(allowed).toContain(h);
    }
    expect(res.headers['access-control-max-age']).toBe('86400');
  });

  it('refuses an OPTIONS that is not a preflight, and still answers it with the CORS headers', async () => {
    for (const headers of [
      {},
      { origin: 'https://dashboard.example.com' },
      { 'access-control-request-method': 'GET' },
    ]) {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/assets', headers });
      expect(res.statusCode).toBe(400);
      expect(res.body).toBe('Invalid Preflight Request');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toBeUndefined();
    }
    // A preflight to a path no route has is answered all the same: the browser asks before it knows.
    const unknown = await t.app.inject({
      method: 'OPTIONS',
      url: '/no/such/path',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' },
    });
    expect(unknown.statusCode).toBe(204);
    expect(unknown.headers['content-length']).toBe('0');
  });

  it('exposes the rate-limit headers and Retry-After on actual responses', async () => {
    const res = await t.api.get('/api/v1/me', acme.key, { origin: 'https://x.example' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']);
    for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'])
      expect(exposed).toContain(h);
    // Every /api/v1 answer allows any origin, whether or not the request named one.
    const plain = await t.api.get('/api/v1/me', acme.key);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('request handling', () => {
  it('answers unknown routes with a JSON 404', async () => {
    for (const url of ['/api/v1/nope', '/nope']) {
      const res = await t.api.get(url, acme.key);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
    }
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ ok: false, error: 'unsupported_media_type' });
  });

  it('refuses prototype poisoning as invalid JSON', async () => {
    const res = await t.api.raw(
      'POST',
      '/api/v1/assets',
      acme.key,
      '{"nickname":"x","assetClass":"trailer","__proto__":{"admin":true}}',
      {},
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_json');
  });

  it('echoes a sane X-Request-Id and generates one otherwise', async () => {
    const mine = await t.api.get('/api/v1/version', null, { 'x-request-id': 'trace-123' });
    expect(mine.headers['x-request-id']).toBe('trace-123');
    const generated = await t.api.get('/api/v1/version', null, { 'x-request-id': 'bad id with spaces' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never writes the bearer token to the logs', async () => {
    t.logs.length = 0;
    await t.api.get('/api/v1/me', acme.key);
    t.app.log.info({ headers: { authorization: `Bearer ${acme.key}` }, secret: 's3cr3t' }, 'probe');
    const text = JSON.stringify(t.logs);
    expect(t.logs.length).toBeGreaterThan(0);
    expect(text).not.toContain(acme.key);
    expect(text).not.toContain('s3cr3t');
  });

  it('hides internals of unexpected errors and returns the request id', async () => {
    const broken = await createTestApp();
    try {
      const tenant = await broken.tenant();
      broken.db.sql.query = () => Promise.reject(new Error('relation "secret_table" does not exist'));
      const res = await broken.api.get('/api/v1/assets', tenant.key, { 'x-request-id': 'req-500' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({
        ok: false,
        error: 'internal_error',
        message: expect.any(String),
        requestId: 'req-500',
      });
      expect(res.body).not.toContain('secret_table');
      expect(broken.logs.some((l) => l.reqId === 'req-500' && l.level === 50)).toBe(true);
    } finally {
      await broken.close();
    }
  });
});
