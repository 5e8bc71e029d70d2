import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeUser } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { USER_SCAN_CAP } from '../../../src/modules/users/users.repository.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignUserId: string;

// The default auth-cache TTL (5 s): removals must still take effect at once in this process.
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignUserId = other.userId;
});
afterAll(() => t.close());

const addUser = (body: unknown, key = acme.key) => t.api.post('/api/v1/users', key, body);
const events = (type: string, orgId = acme.orgId) =>
  t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });
/** A key issued by a second person of the organisation (the first one issued the tenant's key). */
async function keyOfNewPerson(tenant: TestTenant, email: string) {
  const user = (await addUser({ email, name: 'Second Admin' }, tenant.key)).json().user;
  const res = await t.api.post('/api/v1/api-keys', tenant.key, {
    label: 'second',
    scopes: ['users:read', 'users:write', 'assets:read', 'assets:write'],
  });
  // Keys issued over the API belong to the caller's issuer; move it to the new person as an admin would via the CLI.
  await t.db.prisma.apiKey.update({ where: { id: res.json().apiKeyId }, data: { createdById: user.id } });
  return { user, key: res.json().key as string };
}

describe('POST /users', () => {
  it('adds a person with a normalised email, answers 201 and records user.created', async () => {
    const res = await addUser({ email: '  Max.Mechanic@Acme.Example ', name: ' Max Mechanic ' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      ok: true,
      userId: expect.any(String),
      restored: false,
      user: {
        id: body.userId,
        email: 'max.mechanic@acme.example',
        name: 'Max Mechanic',
        createdAt: expect.any(String),
        removedAt: null,
      },
    });
    const [event] = (await events('user.created')).filter((e) => (e.data as { userId: string }).userId === body.userId);
    expect(event.data).toEqual({
      userId: body.userId,
      email: 'max.mechanic@acme.example',
      name: 'Max Mechanic',
      restored: false,
      actorId: acme.userId,
      actorKeyId: acme.keyId,
      at: expect.any(String),
    });
  });

  it('allows a person without a name', async () => {
    const res = await addUser({ email: 'noname@acme.example' });
    expect(res.statusCode).toBe(201);
    expect(res.json().user.name).toBeNull();
  });

  it.each([
    ['a missing email', { name: 'X' }, 'email', 'is required'],
    ['an invalid email', { email: 'not-an-email' }, 'email', 'is not an email address'],
    ['an email with spaces', { email: 'a b@c.de' }, 'email', 'is not an email address'],
    ['a non-string name', { email: 'n@acme.example', name: 5 }, 'name', undefined],
  ])('answers 422 for %s', async (_name, body, field, message) => {
    const res = await addUser(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
    if (message) expect(res.json().fieldErrors[field]).toBe(message);
  });

  it('answers 422 for an email already used in the organisation, whatever its case', async () => {
    await addUser({ email: 'dup@acme.example' });
    const res = await addUser({ email: 'DUP@acme.example' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: 'validation_failed',
      fieldErrors: { email: 'a user with this email already exists' },
    });
  });

  it('allows an email used by another organisation', async () => {
    expect((await addUser({ email: 'shared@example.com' }, other.key)).statusCode).toBe(201);
    expect((await addUser({ email: 'shared@example.com' })).statusCode).toBe(201);
  });

  it('lets exactly one of several concurrent adds of the same email win', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => addUser({ email: 'race@acme.example' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 422, 422, 422]);
    expect(await t.db.prisma.user.count({ where: { orgId: acme.orgId, email: 'race@acme.example' } })).toBe(1);
  });
});

describe('GET /users/:id and PATCH /users/:id', () => {
  it("resolves the id that /me names as the key's creator", async () => {
    const me = (await t.api.get('/api/v1/me', acme.key)).json();
    const res = await t.api.get(`/api/v1/users/${me.apiKey.createdBy.id}`, acme.key);
    expect(res.json()).toEqual({
      ok: true,
      user: { id: acme.userId, email: acme.email, name: 'Olive Ops', createdAt: expect.any(String), removedAt: null },
    });
  });

  it('renames a person; null clears the name; an empty patch is 422', async () => {
    const id = await makeUser(t, acme.key, { email: 'rename@acme.example', name: 'Old' });
    const res = await t.api.patch(`/api/v1/users/${id}`, acme.key, { name: 'New Name', email: 'ignored@acme.example' });
    expect(res.json()).toMatchObject({
      ok: true,
      userId: id,
      user: { name: 'New Name', email: 'rename@acme.example' },
    });
    expect((await t.api.patch(`/api/v1/users/${id}`, acme.key, { name: null })).json().user.name).toBeNull();
    const empty = await t.api.patch(`/api/v1/users/${id}`, acme.key, {});
    expect(empty.statusCode).toBe(422);
    expect(empty.json().fieldErrors).toHaveProperty('body');
  });
});

describe('DELETE /users/:id', () => {
  it('removes a person: their keys read but cannot write, at once; history keeps the name', async () => {
    const { user, key } = await keyOfNewPerson(acme, 'leaver@acme.example');
    expect((await t.api.get('/api/v1/assets', key)).statusCode).toBe(200); // cached as valid now
    const assetId = await makeAsset(t, key, { nickname: 'Van 1', assetClass: 'on-road' });
    const res = await t.api.delete(`/api/v1/users/${user.id}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, userId: user.id, removedAt: expect.any(String) });
    // Within the auth-cache TTL, yet refused: this process dropped the cached key on removal.
    const write = await t.api.patch(`/api/v1/assets/${assetId}`, key, { nickname: 'Van 2' });
    expect(write.statusCode).toBe(403);
    expect(write.json().error).toBe('key_creator_deleted');
    expect((await t.api.get('/api/v1/assets', key)).statusCode).toBe(200);
    const shown = (await t.api.get(`/api/v1/users/${user.id}`, acme.key)).json().user;
    expect(shown).toMatchObject({ name: 'Second Admin', removedAt: res.json().removedAt });
    const [event] = (await events('user.removed')).filter((e) => (e.data as { userId: string }).userId === user.id);
    expect(event.data).toEqual({
      userId: user.id,
      email: 'leaver@acme.example',
      name: 'Second Admin',
      actorId: acme.userId,
      actorKeyId: acme.keyId,
      removedAt: res.json().removedAt,
    });
  });

  it('is idempotent: removing a removed person answers the original time and records no second event', async () => {
    const id = await makeUser(t, acme.key, { email: 'twice@acme.example' });
    const first = (await t.api.delete(`/api/v1/users/${id}`, acme.key)).json();
    const second = await t.api.delete(`/api/v1/users/${id}`, acme.key);
    expect(second.statusCode).toBe(200);
    expect(second.json().removedAt).toBe(first.removedAt);
    expect((await events('user.removed')).filter((e) => (e.data as { userId: string }).userId === id)).toHaveLength(1);
  });

  it('refuses with 409 to remove the person who issued the calling key', async () => {
    const res = await t.api.delete(`/api/v1/users/${acme.userId}`, acme.key);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'cannot_remove_key_creator' });
    expect((await t.db.prisma.user.findUniqueOrThrow({ where: { id: acme.userId } })).removedAt).toBeNull();
  });

  it('adds a removed person back under the same id, with their old keys revoked for good', async () => {
    const { user, key } = await keyOfNewPerson(acme, 'returner@acme.example');
    await t.api.delete(`/api/v1/users/${user.id}`, acme.key);
    const res = await addUser({ email: 'Returner@acme.example' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      userId: user.id,
      restored: true,
      user: { removedAt: null, name: 'Second Admin' },
    });
    const old = await t.api.get('/api/v1/assets', key);
    expect(old.statusCode).toBe(401);
    expect(old.json().error).toBe('revoked');
    const revoked = (await events('apiKey.revoked')).map((e) => e.data as { reason: string; apiKeyId: string });
    expect(revoked.filter((e) => e.reason === 'user_readded')).toHaveLength(1);
    const created = (await events('user.created')).map((e) => e.data as { userId: string; restored: boolean });
    expect(created.filter((e) => e.userId === user.id).map((e) => e.restored)).toEqual([false, true]);
  });
});

describe('GET /users', () => {
  let org: TestTenant;
  beforeAll(async () => {
    org = await t.tenant('Listing');
    for (const [email, name] of [
      ['carol@l.example', 'Carol Crane'],
      ['bob@l.example', 'Bob Builder'],
      ['dave@l.example', null],
      ['erin@l.example', 'Erin Electric'],
    ]) {
      await addUser({ email, name }, org.key);
    }
    const dave = await t.db.prisma.user.findFirstOrThrow({ where: { orgId: org.orgId, email: 'dave@l.example' } });
    await t.api.delete(`/api/v1/users/${dave.id}`, org.key);
  });
  const list = async (query: string) => (await t.api.get(`/api/v1/users${query}`, org.key)).json();
  const emails = (body: { users: { email: string }[] }) => body.users.map((u) => u.email);

  it("lists the organisation's current people by email, without removed ones unless asked", async () => {
    expect(emails(await list(''))).toEqual(['bob@l.example', 'carol@l.example', 'erin@l.example', org.email]);
    expect(emails(await list('?includeRemoved=true'))).toEqual([
      'bob@l.example',
      'carol@l.example',
      'dave@l.example',
      'erin@l.example',
      org.email,
    ]);
  });

  it('walks every person exactly once with cursors', async () => {
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const body = await list(`?limit=2&includeRemoved=true${cursor ? `&cursor=${cursor}` : ''}`);
      expect(body.users.length).toBeLessThanOrEqual(2);
      seen.push(...emails(body));
      cursor = body.nextCursor;
    }
    expect(seen).toEqual(['bob@l.example', 'carol@l.example', 'dave@l.example', 'erin@l.example', org.email]);
  });

  it('filters with q on name or email, case-insensitively, with % and _ taken literally', async () => {
    expect(emails(await list('?q=BUILD'))).toEqual(['bob@l.example']);
    expect(emails(await list('?q=erin@'))).toEqual(['erin@l.example']);
    expect(emails(await list('?q=%25'))).toEqual([]);
    expect(emails(await list('?q=_'))).toEqual([]);
    expect(emails(await list('?q=dave'))).toEqual([]);
    expect(emails(await list('?q=dave&includeRemoved=1'))).toEqual(['dave@l.example']);
  });

  it('answers 422 for a cursor it did not issue', async () => {
    const res = await t.api.get(`/api/v1/users?cursor=${Buffer.from('[1]').toString('base64url')}`, org.key);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('cursor');
  });

  it("never lists another organisation's people", async () => {
    const body = await list('?includeRemoved=true&limit=200');
    expect(body.users.every((u: { email: string }) => u.email.endsWith('l.example') || u.email === org.email)).toBe(
      true,
    );
  });

  it(`examines at most ${USER_SCAN_CAP} people per page and continues where it stopped`, async () => {
    const big = await t.tenant('Big');
    await t.db.sql.query(
      `INSERT INTO users (id, "orgId", email, name)
       SELECT gen_random_uuid()::text, $1, 'p' || lpad(g::text, 5, '0') || '@big.example', 'Person ' || g FROM generate_series(1, $2) g`,
      [big.orgId, USER_SCAN_CAP + 100],
    );
    await addUser({ email: 'zz-needle@big.example', name: 'Needle' }, big.key);
    const first = (await t.api.get('/api/v1/users?q=needle', big.key)).json();
    expect(first.users).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    const second = (await t.api.get(`/api/v1/users?q=needle&cursor=${first.nextCursor}`, big.key)).json();
    expect(emails(second)).toEqual(['zz-needle@big.example']);
    expect(second.nextCursor).toBeNull();
    // Unfiltered pages stay full.
    expect((await t.api.get('/api/v1/users?limit=200', big.key)).json().users).toHaveLength(200);
  });
});

describe('scopes', () => {
  it('keys issued with the original sixteen scopes keep exactly them: no access to people', async () => {
    const original =
      'assets:read,assets:write,hours:read,hours:write,flags:read,flags:write,workorders:read,workorders:write,tools:read,tools:write,projects:read,projects:write,yards:read,yards:write,events:read,events:write';
    const { key } = await acme.newKey({ scopes: original });
    const res = await t.api.get('/api/v1/users', key);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('missing_scope:users:read');
  });
});

securitySuite('users', () => ({ t, tenant: acme }), [
  { label: 'GET /users', method: 'GET', path: () => '/api/v1/users', scope: 'users:read' },
  {
    label: 'POST /users',
    method: 'POST',
    path: () => '/api/v1/users',
    scope: 'users:write',
    body: { email: 'sec@acme.example' },
  },
  {
    label: 'GET /users/:id',
    method: 'GET',
    path: () => `/api/v1/users/${foreignUserId}`,
    scope: 'users:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /users/:id',
    method: 'PATCH',
    path: () => `/api/v1/users/${foreignUserId}`,
    scope: 'users:write',
    body: { name: 'X' },
    crossTenant: true,
  },
  {
    label: 'DELETE /users/:id',
    method: 'DELETE',
    path: () => `/api/v1/users/${foreignUserId}`,
    scope: 'users:write',
    crossTenant: true,
  },
]);
