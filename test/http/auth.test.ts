import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { createOrgAdmin } from '../../src/modules/orgs/orgs.service.ts';
import { generateApiKey, hashApiKey } from '../../src/core/api-keys.ts';
import { SCOPES } from '../../src/core/context.ts';

let t: TestApp;
let acme: TestTenant;

beforeAll(async () => {
  // A zero TTL makes every request see the database's current state of the key.
  t = await createTestApp({ AUTH_CACHE_TTL_MS: '0' });
  acme = await t.tenant();
});
afterAll(() => t.close());

const me = (authorization?: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/me', headers: authorization === undefined ? {} : { authorization } });

describe('bearer authentication', () => {
  it.each([
    ['no header', undefined, 'missing_bearer'],
    ['another scheme', 'Basic dXNlcjpwYXNz', 'missing_bearer'],
    ['an empty bearer', 'Bearer ', 'malformed_token'],
    ['a token of the wrong shape', 'Bearer abc.def', 'malformed_token'],
    ['a well-formed key nobody issued', `Bearer ${generateApiKey()}`, 'unknown_token'],
  ])('answers 401 for %s', async (_name, header, code) => {
    const res = await me(header);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ ok: false, error: code, message: expect.any(String) });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('accepts the key and reports the organisation and key on /me', async () => {
    const res = await me(`Bearer ${acme.key}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.organization).toMatchObject({ id: acme.orgId, slug: acme.slug, name: 'Acme Haulage' });
    expect(body.apiKey).toMatchObject({
      id: acme.keyId,
      label: 'test',
      expiresAt: null,
      createdBy: { id: acme.userId, email: acme.email, name: 'Olive Ops' },
    });
    // The test tenant's key holds every scope there is.
    expect([...body.apiKey.scopes].sort()).toEqual([...SCOPES].sort());
    expect(Date.parse(body.apiKey.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('stores only the SHA-256 of the key', async () => {
    const row = await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: acme.keyId } });
    expect(row.keyHash).toBe(hashApiKey(acme.key));
    expect(JSON.stringify(row)).not.toContain(acme.key.slice(4));
  });

  it('answers 401 revoked for a revoked key', async () => {
    const { key, id } = await acme.newKey();
    expect((await me(`Bearer ${key}`)).statusCode).toBe(200);
    await createOrgAdmin(t.db).revokeKey(id);
    const res = await me(`Bearer ${key}`);
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('revoked');
  });

  it('answers 401 expired for an expired key', async () => {
    const { key, id } = await acme.newKey({ expires: new Date(Date.now() + 60_000).toISOString() });
    expect((await me(`Bearer ${key}`)).statusCode).toBe(200);
    await t.db.prisma.apiKey.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const res = await me(`Bearer ${key}`);
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('expired');
  });
});

describe('scopes and key creator', () => {
  it('answers 403 missing_scope:<scope> for a key without the scope, and /me needs none', async () => {
    const { key } = await acme.newKey({ scopes: 'yards:read' });
    expect((await t.api.get('/api/v1/me', key)).statusCode).toBe(200);
    const res = await t.api.get('/api/v1/assets', key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ ok: false, error: 'missing_scope:assets:read' });
  });

  it('refuses writes but allows reads once the issuing user is removed', async () => {
    const tenant = await t.tenant('Removed Co');
    await createOrgAdmin(t.db).removeUser(tenant.slug, tenant.email);
    expect((await t.api.get('/api/v1/assets', tenant.key)).statusCode).toBe(200);
    const res = await t.api.post('/api/v1/assets', tenant.key, { nickname: 'x', assetClass: 'trailer' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('key_creator_deleted');
    expect(await t.db.prisma.asset.count({ where: { orgId: tenant.orgId } })).toBe(0);
  });

  it('authenticates before parsing the body', async () => {
    const res = await t.api.raw('POST', '/api/v1/assets', null, '{not json', {});
    expect(res.statusCode).toBe(401);
  });
});

describe('verified-key cache', () => {
  it('serves cached keys without a database read and sees revocation after the TTL', async () => {
    // The cache reads the wall clock: freezing it makes "within the TTL" independent of the machine's load.
    vi.useFakeTimers({ toFake: ['Date'] });
    const cached = await createTestApp({ AUTH_CACHE_TTL_MS: '60000' });
    try {
      const tenant = await cached.tenant();
      expect((await cached.api.get('/api/v1/me', tenant.key)).statusCode).toBe(200);
      await createOrgAdmin(cached.db).revokeKey(tenant.keyId);
      vi.setSystemTime(Date.now() + 59_000);
      // Within the TTL the cached verification still stands...
      expect((await cached.api.get('/api/v1/me', tenant.key)).statusCode).toBe(200);
      vi.setSystemTime(Date.now() + 2_000);
      // ...and after it the revocation takes effect.
      expect((await cached.api.get('/api/v1/me', tenant.key)).json().error).toBe('revoked');
    } finally {
      vi.useRealTimers();
      await cached.close();
    }
  });
});

describe('lastUsedAt', () => {
  it('is recorded in memory and written to the database in bulk, not per request', async () => {
    const { key, id } = await acme.newKey();
    await t.api.get('/api/v1/me', key);
    expect((await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toBeNull();
    await t.deps.auth.flushLastUsed();
    const stored = (await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt;
    expect(stored?.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('GET /me shows the use of each request: a later millisecond gives a later lastUsedAt', async () => {
    const { key } = await acme.newKey();
    const first = (await t.api.get('/api/v1/me', key)).json().apiKey.lastUsedAt as string;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = (await t.api.get('/api/v1/me', key)).json().apiKey.lastUsedAt as string;
    expect(Date.parse(second)).toBeGreaterThan(Date.parse(first));
  });
});
