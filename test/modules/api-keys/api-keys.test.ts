import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeUser } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { hashApiKey } from '../../../src/core/api-keys.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignKeyId: string;

// The default auth-cache TTL (5 s): revocations must still take effect at once in this process.
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignKeyId = (await other.newKey({ label: 'foreign' })).id;
});
afterAll(() => t.close());

const issue = (body: unknown, key = acme.key) => t.api.post('/api/v1/api-keys', key, body);
const me = async (key: string) => t.api.get('/api/v1/me', key);
const eventsOf = async (type: string, apiKeyId: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type }, orderBy: { createdAt: 'asc' } }))
    .map((e) => e.data as Record<string, unknown>)
    .filter((d) => d.apiKeyId === apiKeyId);

describe('POST /api-keys', () => {
  it("issues a key once, within the caller's scopes, issued by the caller's issuer, and records apiKey.created", async () => {
    const res = await issue({
      label: ' ERP sync ',
      scopes: ['assets:read', 'workorders:write', 'assets:read'],
      rateLimitPerMinute: 120,
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.key).toMatch(/^flt_[A-Za-z0-9_-]{43}$/);
    expect(body.apiKey).toEqual({
      id: body.apiKeyId,
      label: 'ERP sync',
      scopes: ['assets:read', 'workorders:write'],
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      rateLimitPerMinute: 120,
      rolledFromId: null,
      createdBy: { id: acme.userId, name: 'Olive Ops', email: acme.email },
    });
    const used = (await me(body.key)).json();
    expect(used.apiKey).toMatchObject({
      id: body.apiKeyId,
      scopes: ['assets:read', 'workorders:write'],
      createdBy: { id: acme.userId },
    });
    expect((await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: body.apiKeyId } })).keyHash).toBe(
      hashApiKey(body.key),
    );
    const [event] = await eventsOf('apiKey.created', body.apiKeyId);
    expect(event).toEqual({
      apiKeyId: body.apiKeyId,
      label: 'ERP sync',
      scopes: ['assets:read', 'workorders:write'],
      expiresAt: null,
      rateLimitPerMinute: 120,
      createdById: acme.userId,
      rolledFromId: null,
      actorId: acme.userId,
      actorKeyId: acme.keyId,
      createdAt: body.apiKey.createdAt,
    });
    const stored = JSON.stringify(await t.db.prisma.event.findMany({ where: { orgId: acme.orgId } }));
    expect(stored).not.toContain(body.key.slice(4));
    expect(stored).not.toContain(hashApiKey(body.key));
  });

  it('answers 403 scope_escalation for a scope the calling key lacks, and issues nothing', async () => {
    const { key } = await acme.newKey({ scopes: 'keys:write,assets:read' });
    const before = await t.db.prisma.apiKey.count({ where: { orgId: acme.orgId } });
    const res = await issue({ label: 'more', scopes: ['assets:read', 'assets:write'] }, key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ ok: false, error: 'scope_escalation' });
    expect(res.json().message).toContain('assets:write');
    expect(await t.db.prisma.apiKey.count({ where: { orgId: acme.orgId } })).toBe(before);
    expect((await issue({ label: 'same', scopes: ['assets:read'] }, key)).statusCode).toBe(201);
  });

  it("keeps the rate limit at or below the caller's, inheriting it by default", async () => {
    const { key } = await acme.newKey({ scopes: 'keys:write,assets:read', rateLimit: 100 });
    const over = await issue({ label: 'x', scopes: ['assets:read'], rateLimitPerMinute: 101 }, key);
    expect(over.statusCode).toBe(403);
    expect(over.json().error).toBe('rate_limit_escalation');
    expect((await issue({ label: 'x', scopes: ['assets:read'] }, key)).json().apiKey.rateLimitPerMinute).toBe(100);
    expect(
      (await issue({ label: 'x', scopes: ['assets:read'], rateLimitPerMinute: 10 }, key)).json().apiKey
        .rateLimitPerMinute,
    ).toBe(10);
  });

  it("keeps the expiry at or before the caller's, inheriting it by default", async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const { key } = await acme.newKey({ scopes: 'keys:write,assets:read', expires });
    expect((await issue({ label: 'x', scopes: ['assets:read'] }, key)).json().apiKey.expiresAt).toBe(expires);
    const later = await issue(
      { label: 'x', scopes: ['assets:read'], expiresAt: new Date(Date.now() + 7_200_000).toISOString() },
      key,
    );
    expect(later.statusCode).toBe(403);
    expect(later.json().error).toBe('expiry_escalation');
    const sooner = new Date(Date.now() + 600_000).toISOString();
    expect((await issue({ label: 'x', scopes: ['assets:read'], expiresAt: sooner }, key)).json().apiKey.expiresAt).toBe(
      sooner,
    );
  });

  it.each([
    ['an unknown scope', { label: 'x', scopes: ['assets:destroy'] }, 'scopes.0'],
    ['no scopes', { label: 'x', scopes: [] }, 'scopes'],
    ['a blank label', { label: '  ', scopes: ['assets:read'] }, 'label'],
    ['a past expiry', { label: 'x', scopes: ['assets:read'], expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
    ['a zero rate limit', { label: 'x', scopes: ['assets:read'], rateLimitPerMinute: 0 }, 'rateLimitPerMinute'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await issue(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it("is refused with 403 key_creator_deleted once the caller's issuer is removed", async () => {
    const tenant = await t.tenant('Gone Co');
    // The tenant's own key moves to a second person, so it may remove the first, who issued `key`.
    const second = await makeUser(t, tenant.key, { email: 'second@gone.example' });
    await t.db.prisma.apiKey.update({ where: { id: tenant.keyId }, data: { createdById: second } });
    t.deps.auth.clearCache();
    const { key } = await tenant.newKey({ scopes: 'users:write,keys:write,assets:read' });
    await t.api.delete(`/api/v1/users/${tenant.userId}`, tenant.key);
    const res = await issue({ label: 'x', scopes: ['assets:read'] }, key);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('key_creator_deleted');
  });
});

describe('GET /api-keys', () => {
  it("lists the organisation's keys newest first, revoked ones included, never the key or its hash", async () => {
    const tenant = await t.tenant('Lister');
    const issued: string[] = [tenant.keyId];
    for (let i = 0; i < 4; i++)
      issued.push((await issue({ label: `k${i}`, scopes: ['assets:read'] }, tenant.key)).json().apiKeyId);
    await t.api.delete(`/api/v1/api-keys/${issued[1]}`, tenant.key);
    const seen: { id: string; revokedAt: string | null }[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res = await t.api.get(`/api/v1/api-keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`, tenant.key);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toMatch(/keyHash|flt_/);
      seen.push(...res.json().apiKeys);
      cursor = res.json().nextCursor;
    }
    expect(seen.map((k) => k.id)).toEqual([...issued].reverse());
    expect(seen.find((k) => k.id === issued[1])!.revokedAt).not.toBeNull();
  });

  it("shows one key with lastUsedAt, and 404 for another organisation's key", async () => {
    await me(acme.key);
    const res = await t.api.get(`/api/v1/api-keys/${acme.keyId}`, acme.key);
    expect(res.json().apiKey).toMatchObject({ id: acme.keyId, label: 'test', revokedAt: null });
    expect(Date.parse(res.json().apiKey.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await t.api.get(`/api/v1/api-keys/${foreignKeyId}`, acme.key)).statusCode).toBe(404);
  });
});

describe('DELETE /api-keys/:id', () => {
  it('revokes at once in this process (within the cache TTL) and records apiKey.revoked', async () => {
    const { key, id } = await acme.newKey({ label: 'doomed' });
    expect((await me(key)).statusCode).toBe(200);
    const res = await t.api.delete(`/api/v1/api-keys/${id}`, acme.key);
    expect(res.json()).toEqual({ ok: true, apiKeyId: id, revokedAt: expect.any(String) });
    const after = await me(key);
    expect(after.statusCode).toBe(401);
    expect(after.json().error).toBe('revoked');
    expect(await eventsOf('apiKey.revoked', id)).toEqual([
      {
        apiKeyId: id,
        label: 'doomed',
        reason: 'revoked',
        actorId: acme.userId,
        actorKeyId: acme.keyId,
        revokedAt: res.json().revokedAt,
      },
    ]);
  });

  it('answers the original time for an already revoked key and records no second event', async () => {
    const { id } = await acme.newKey();
    const first = (await t.api.delete(`/api/v1/api-keys/${id}`, acme.key)).json();
    const second = await t.api.delete(`/api/v1/api-keys/${id}`, acme.key);
    expect(second.statusCode).toBe(200);
    expect(second.json().revokedAt).toBe(first.revokedAt);
    expect(await eventsOf('apiKey.revoked', id)).toHaveLength(1);
  });

  it('lets a key revoke itself', async () => {
    const { key, id } = await acme.newKey({ scopes: 'keys:write' });
    expect((await t.api.delete(`/api/v1/api-keys/${id}`, key)).statusCode).toBe(200);
    expect((await me(key)).json().error).toBe('revoked');
  });

  it("never revokes another organisation's key", async () => {
    expect((await t.api.delete(`/api/v1/api-keys/${foreignKeyId}`, acme.key)).statusCode).toBe(404);
    expect((await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: foreignKeyId } })).revokedAt).toBeNull();
  });
});

describe('POST /api-keys/:id/roll', () => {
  it('replaces the key with the same label, scopes and limits and revokes the old one now by default', async () => {
    const { key, id } = await acme.newKey({ label: 'rotating', scopes: 'assets:read,tools:read', rateLimit: 90 });
    const res = await t.api.raw('POST', `/api/v1/api-keys/${id}/roll`, acme.key);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.apiKey).toMatchObject({
      label: 'rotating',
      scopes: ['assets:read', 'tools:read'],
      rateLimitPerMinute: 90,
      rolledFromId: id,
      revokedAt: null,
    });
    expect(body.previousKey).toEqual({ id, expiresAt: null, revokedAt: expect.any(String) });
    expect((await me(key)).json().error).toBe('revoked');
    expect((await me(body.key)).statusCode).toBe(200);
    expect(await eventsOf('apiKey.revoked', id)).toMatchObject([{ reason: 'rolled' }]);
    expect(await eventsOf('apiKey.created', body.apiKeyId)).toMatchObject([{ rolledFromId: id }]);
  });

  it('keeps the old key working for expireOldInSeconds', async () => {
    const { key, id } = await acme.newKey({ label: 'overlap' });
    const res = await t.api.post(`/api/v1/api-keys/${id}/roll`, acme.key, { expireOldInSeconds: 3600 });
    const expiresAt = Date.parse(res.json().previousKey.expiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now() + 3_590_000);
    expect(expiresAt).toBeLessThan(Date.now() + 3_610_000);
    expect((await me(key)).statusCode).toBe(200);
    expect((await me(res.json().key)).statusCode).toBe(200);
    const again = await t.api.post(`/api/v1/api-keys/${id}/roll`, acme.key, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('key_already_rolled');
  });

  it('lets one of two concurrent rolls of a key win', async () => {
    const { id } = await acme.newKey();
    const results = await Promise.all(
      [0, 1].map(() => t.api.post(`/api/v1/api-keys/${id}/roll`, acme.key, { expireOldInSeconds: 60 })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(await t.db.prisma.apiKey.count({ where: { rolledFromId: id } })).toBe(1);
  });

  it('refuses revoked keys (409), overlaps beyond 7 days (422) and keys with more scopes than the caller (403)', async () => {
    const { id } = await acme.newKey();
    await t.api.delete(`/api/v1/api-keys/${id}`, acme.key);
    expect((await t.api.post(`/api/v1/api-keys/${id}/roll`, acme.key, {})).json().error).toBe('key_revoked');
    const live = await acme.newKey();
    const tooLong = await t.api.post(`/api/v1/api-keys/${live.id}/roll`, acme.key, { expireOldInSeconds: 604_801 });
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.json().fieldErrors).toHaveProperty('expireOldInSeconds');
    const { key: weak } = await acme.newKey({ scopes: 'keys:write' });
    const escalate = await t.api.post(`/api/v1/api-keys/${live.id}/roll`, weak, {});
    expect(escalate.statusCode).toBe(403);
    expect(escalate.json().error).toBe('scope_escalation');
    expect(await t.db.prisma.apiKey.count({ where: { rolledFromId: live.id } })).toBe(0);
  });
});

securitySuite('api-keys', () => ({ t, tenant: acme }), [
  { label: 'GET /api-keys', method: 'GET', path: () => '/api/v1/api-keys', scope: 'keys:read' },
  {
    label: 'POST /api-keys',
    method: 'POST',
    path: () => '/api/v1/api-keys',
    scope: 'keys:write',
    body: { label: 'x', scopes: ['assets:read'] },
  },
  {
    label: 'GET /api-keys/:id',
    method: 'GET',
    path: () => `/api/v1/api-keys/${foreignKeyId}`,
    scope: 'keys:read',
    crossTenant: true,
  },
  {
    label: 'DELETE /api-keys/:id',
    method: 'DELETE',
    path: () => `/api/v1/api-keys/${foreignKeyId}`,
    scope: 'keys:write',
    crossTenant: true,
  },
  {
    label: 'POST /api-keys/:id/roll',
    method: 'POST',
    path: () => `/api/v1/api-keys/${foreignKeyId}/roll`,
    scope: 'keys:write',
    body: {},
    crossTenant: true,
  },
]);
