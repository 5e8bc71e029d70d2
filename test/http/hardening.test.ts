import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { makeAsset, makeTool } from '../helpers/app/factories.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { createOrgAdmin } from '../../src/modules/orgs/orgs.service.ts';
import { generateApiKey } from '../../src/core/api-keys.ts';
import { encodeCursor } from '../../src/core/pagination.ts';

let t: TestApp;
let acme: TestTenant;
let assetId: string;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
  assetId = await makeAsset(t, acme.key, { nickname: 'Hardy', assetClass: 'off-road' });
});
afterAll(() => t.close());

describe('inputs the database cannot store are 422, never 500', () => {
  it.each([
    [
      'a body string',
      () => t.api.post('/api/v1/assets', acme.key, { nickname: 'a\u0000b', assetClass: 'trailer' }),
      'nickname',
    ],
    [
      'a nested body string',
      () => t.api.post('/api/v1/assets/batch', acme.key, [{ nickname: 'ok', assetClass: 'trailer', vin: 'x\u0000' }]),
      '0.vin',
    ],
    ['a query value', () => t.api.get('/api/v1/tools?category=a%00b', acme.key), 'category'],
    ['a path id', () => t.api.get('/api/v1/assets/a%00b', acme.key), 'id'],
    [
      'the Idempotency-Key header',
      () => t.api.post('/api/v1/hours', acme.key, { assetId, hoursReading: 1 }, { 'idempotency-key': 'k\u0000' }),
      'Idempotency-Key',
    ],
  ])('a NUL character in %s', async (_name, call, field) => {
    const res = await call();
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it.each([
    [
      'PATCH /assets/:id purchaseDate',
      () => t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { purchaseDate: '0000-01-01' }),
      'purchaseDate',
    ],
    [
      'POST /hours loggedAt',
      () => t.api.post('/api/v1/hours', acme.key, { assetId, hoursReading: 5, loggedAt: '0000-01-01T00:00:00Z' }),
      'loggedAt',
    ],
    ['GET /hours since', () => t.api.get('/api/v1/hours?since=0000-01-01', acme.key), 'since'],
  ])('year 0000 in %s', async (_name, call, field) => {
    const res = await call();
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it.each([
    '/api/v1/assets',
    '/api/v1/flags',
    '/api/v1/hours',
    '/api/v1/repairs',
    '/api/v1/projects',
    '/api/v1/webhooks',
  ])('hand-made cursors on %s', async (path) => {
    for (const values of [
      ['2020-01-01T00:00:00Z', 5],
      ['2020-01-01T00:00:00Z', null],
      ['0000-01-01T00:00:00Z', 'x'],
      ['+275760-09-13T00:00:00Z', 'x'],
    ]) {
      const res = await t.api.get(`${path}?cursor=${encodeCursor(values as (string | number | null)[])}`, acme.key);
      expect(res.statusCode, `${path} ${JSON.stringify(values)}: ${res.body}`).toBe(422);
      expect(res.json().fieldErrors).toHaveProperty('cursor');
    }
  });

  it('an id of any length that does not exist is 404', async () => {
    for (const id of ['x'.repeat(150), 'y'.repeat(450)]) {
      const res = await t.api.get(`/api/v1/assets/${id}`, acme.key);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
  });

  it('a malformed URL gets the API error body', async () => {
    const res = await t.api.get('/api/v1/assets/%E0%A4%A', acme.key);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ ok: false, error: 'bad_url', message: expect.any(String) });
  });
});

describe('keys and users', () => {
  it('re-adding a removed user does not give their old keys write access back', async () => {
    const tenant = await t.tenant('Comeback');
    const admin = createOrgAdmin(t.db);
    await admin.removeUser(tenant.slug, tenant.email);
    await admin.createUser(tenant.slug, tenant.email);
    t.deps.auth.clearCache();
    const res = await t.api.post('/api/v1/assets', tenant.key, { nickname: 'x', assetClass: 'trailer' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('revoked');
  });

  it('remembers unknown keys briefly instead of querying for each attempt', async () => {
    const original = t.db.sql.query;
    let lookups = 0;
    t.db.sql.query = ((...args: Parameters<typeof original>) => {
      if (args[2] === 'auth_key_lookup') lookups++;
      return original.apply(t.db.sql, args);
    }) as typeof original;
    try {
      const bogus = generateApiKey();
      for (let i = 0; i < 5; i++) expect((await t.api.get('/api/v1/me', bogus)).json().error).toBe('unknown_token');
      expect(lookups).toBe(1);
    } finally {
      t.db.sql.query = original;
    }
  });
});

describe('concurrent updates emit one event per real change', () => {
  it('five identical PATCHes of an asset record one asset.updated', async () => {
    const id = await makeAsset(t, acme.key, { nickname: 'Contended', assetClass: 'trailer' });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.api.patch(`/api/v1/assets/${id}`, acme.key, { licensePlate: 'RACE 1' })),
    );
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const updates = (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'asset.updated' } })).filter(
      (e) => (e.data as { assetId: string }).assetId === id,
    );
    expect(updates).toHaveLength(1);
  });

  it('five identical tool reassignments record one tool.assignment_changed', async () => {
    const id = await makeTool(t, acme.key, { name: 'Contended drill' });
    await Promise.all(
      Array.from({ length: 5 }, () => t.api.patch(`/api/v1/tools/${id}`, acme.key, { assignedUserId: acme.userId })),
    );
    const changes = (
      await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'tool.assignment_changed' } })
    ).filter((e) => (e.data as { toolId: string }).toolId === id);
    expect(changes).toHaveLength(1);
  });
});

describe('notifications', () => {
  it('a notification whose last attempt never reported back is marked FAILED', async () => {
    const stranded = await t.db.prisma.notification.create({
      data: {
        orgId: acme.orgId,
        channel: 'EMAIL',
        kind: 'test',
        subject: 's',
        body: 'b',
        attempts: 5,
        createdAt: new Date(Date.now() - 3 * 3600 * 1000),
      },
    });
    await t.deps.services.notifications.sendPending();
    expect((await t.db.prisma.notification.findUniqueOrThrow({ where: { id: stranded.id } })).status).toBe('FAILED');
  });
});
