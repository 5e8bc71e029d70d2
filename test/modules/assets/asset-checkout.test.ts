import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgAdmin } from '../../../src/modules/orgs/orgs.service.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeProject } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let secondUserId: string;
let projectId: string;
let foreignAssetId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  secondUserId = (await createOrgAdmin(t.db).createUser(acme.slug, `second@${acme.slug}.example.com`, 'Sam Second')).id;
  projectId = await makeProject(t, acme.key, { name: 'Depot rebuild' });
  foreignAssetId = await makeAsset(t, other.key, { nickname: 'Theirs', assetClass: 'trailer' });
});
afterAll(() => t.close());

const checkout = (assetId: string, body: unknown) => t.api.post(`/api/v1/assets/${assetId}/checkout`, acme.key, body);
const checkin = (assetId: string, body: unknown = {}) =>
  t.api.post(`/api/v1/assets/${assetId}/checkin`, acme.key, body);
const assetDetail = async (id: string) => (await t.api.get(`/api/v1/assets/${id}`, acme.key)).json().asset;
const eventsFor = async (type: string, assetId: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type }, orderBy: { createdAt: 'asc' } }))
    .map((e) => e.data as Record<string, unknown>)
    .filter((d) => d.assetId === assetId);

describe('POST /assets/:id/checkout', () => {
  it('checks out to a user and a project, shows it on the asset detail and emits asset.checked_out', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const res = await checkout(assetId, {
      toUserId: acme.userId,
      toProjectId: projectId,
      expectedReturnAt: '2026-12-01T17:00:00+01:00',
      note: ' For the slab pour ',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      ok: true,
      assetId,
      changed: true,
      checkout: {
        toUserId: acme.userId,
        toProjectId: projectId,
        checkedOutAt: expect.any(String),
        expectedReturnAt: '2026-12-01T16:00:00.000Z',
        note: 'For the slab pour',
      },
    });
    expect((await assetDetail(assetId)).checkout).toEqual(body.checkout);
    expect(await eventsFor('asset.checked_out', assetId)).toEqual([
      {
        assetId,
        nickname: 'Skid steer',
        toUserId: acme.userId,
        toProjectId: projectId,
        actorId: acme.userId,
        expectedReturnAt: '2026-12-01T16:00:00.000Z',
        note: 'For the slab pour',
        at: body.checkout.checkedOutAt,
      },
    ]);
  });

  it('is idempotent for the same target: succeeds silently without a second event', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const first = (await checkout(assetId, { toUserId: acme.userId })).json();
    const again = await checkout(assetId, { toUserId: acme.userId, toProjectId: null, note: 'again' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ok: true, assetId, changed: false, checkout: first.checkout });
    expect(await eventsFor('asset.checked_out', assetId)).toHaveLength(1);
  });

  it('answers 409 for another user without force, and rebinds with force', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    await checkout(assetId, { toUserId: acme.userId, toProjectId: projectId });
    for (const body of [
      { toUserId: secondUserId },
      { toUserId: secondUserId, force: false },
      { toProjectId: projectId },
    ]) {
      const res = await checkout(assetId, body);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'asset_checked_out' });
    }
    expect((await assetDetail(assetId)).checkout).toMatchObject({ toUserId: acme.userId, toProjectId: projectId });

    const forced = await checkout(assetId, { toUserId: secondUserId, force: true });
    expect(forced.statusCode).toBe(200);
    expect(forced.json().checkout).toMatchObject({ toUserId: secondUserId, toProjectId: null });
    const events = await eventsFor('asset.checked_out', assetId);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({
      toUserId: secondUserId,
      toProjectId: null,
      fromUserId: acme.userId,
      fromProjectId: projectId,
    });
  });

  it('lets the same user move the asset to another project, and a project-only checkout move without force', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const nextProject = await makeProject(t, acme.key, { name: 'Yard paving' });
    await checkout(assetId, { toUserId: acme.userId, toProjectId: projectId });
    const moved = await checkout(assetId, { toUserId: acme.userId, toProjectId: nextProject });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({
      changed: true,
      checkout: { toUserId: acme.userId, toProjectId: nextProject },
    });

    const projectOnly = await makeAsset(t, acme.key, { nickname: 'Light tower' });
    await checkout(projectOnly, { toProjectId: projectId });
    const res = await checkout(projectOnly, { toProjectId: nextProject });
    expect(res.statusCode).toBe(200);
    expect(res.json().checkout).toMatchObject({ toUserId: null, toProjectId: nextProject });
  });

  it('clamps the note to 500 characters instead of rejecting it', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const res = await checkout(assetId, { toUserId: acme.userId, note: 'x'.repeat(750) });
    expect(res.statusCode).toBe(200);
    expect(res.json().checkout.note).toHaveLength(500);
    const stored = await t.db.prisma.asset.findUnique({ where: { id: assetId } });
    expect(stored?.checkoutNote).toHaveLength(500);
  });

  it('answers 422 without a target, for a bad date, and for users or projects outside the organisation', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const foreignProject = await makeProject(t, other.key, { name: 'Theirs' });
    const removed = await createOrgAdmin(t.db).createUser(acme.slug, `gone@${acme.slug}.example.com`);
    await createOrgAdmin(t.db).removeUser(acme.slug, removed.email);
    const cases: [unknown, string[]][] = [
      [{}, ['toProjectId', 'toUserId']],
      [{ toUserId: null, toProjectId: null, force: true }, ['toProjectId', 'toUserId']],
      [{ toUserId: acme.userId, expectedReturnAt: 'next tuesday' }, ['expectedReturnAt']],
      [{ toUserId: acme.userId, force: 'yes' }, ['force']],
      [{ toUserId: other.userId, toProjectId: foreignProject }, ['toProjectId', 'toUserId']],
      [{ toUserId: removed.id }, ['toUserId']],
      [{ toProjectId: 'no-such-project' }, ['toProjectId']],
    ];
    for (const [body, fields] of cases) {
      const res = await checkout(assetId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.json().fieldErrors).sort()).toEqual(fields);
    }
    expect((await assetDetail(assetId)).checkout).toBeNull();
    expect(await eventsFor('asset.checked_out', assetId)).toHaveLength(0);
  });

  it('answers 409 asset_unavailable for a sold or archived asset', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'SOLD' });
    const res = await checkout(assetId, { toUserId: acme.userId });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'asset_unavailable' });
  });

  it('gives one of two users racing for a free asset the checkout and the other a 409', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const results = await Promise.all([acme.userId, secondUserId].map((toUserId) => checkout(assetId, { toUserId })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await eventsFor('asset.checked_out', assetId)).toHaveLength(1);
  });
});

describe('POST /assets/:id/checkin', () => {
  it('resets the checkout and emits asset.checked_in with the note only in the event', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    await checkout(assetId, {
      toUserId: secondUserId,
      toProjectId: projectId,
      expectedReturnAt: '2026-12-24',
      note: 'Out for a week',
    });
    const res = await checkin(assetId, { note: 'Returned with a cracked mirror' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, assetId, changed: true, checkout: null });
    expect((await assetDetail(assetId)).checkout).toBeNull();
    const stored = await t.db.prisma.asset.findUnique({ where: { id: assetId } });
    expect(stored).toMatchObject({
      checkedOutToUserId: null,
      checkedOutToProjectId: null,
      checkedOutAt: null,
      expectedReturnAt: null,
      checkoutNote: null,
    });
    expect(await eventsFor('asset.checked_in', assetId)).toEqual([
      {
        assetId,
        nickname: 'Skid steer',
        fromUserId: secondUserId,
        fromProjectId: projectId,
        note: 'Returned with a cracked mirror',
        actorId: acme.userId,
        at: expect.any(String),
        checkedOutAt: expect.any(String),
      },
    ]);
  });

  it('succeeds without an event when the asset is not checked out, with or without a body', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    const res = await checkin(assetId, { note: 'nothing to do' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, assetId, changed: false, checkout: null });
    const bare = await t.api.raw('POST', `/api/v1/assets/${assetId}/checkin`, acme.key);
    expect(bare.statusCode, bare.body).toBe(200);
    expect(await eventsFor('asset.checked_in', assetId)).toHaveLength(0);
  });

  it('clamps the check-in note to 500 characters in the event', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    await checkout(assetId, { toProjectId: projectId });
    await checkin(assetId, { note: 'y'.repeat(900) });
    const [event] = await eventsFor('asset.checked_in', assetId);
    expect(event.note).toHaveLength(500);
  });

  it('makes the asset free for another user again', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Skid steer' });
    await checkout(assetId, { toUserId: acme.userId });
    await checkin(assetId);
    const res = await checkout(assetId, { toUserId: secondUserId });
    expect(res.statusCode).toBe(200);
    expect(res.json().checkout).toMatchObject({ toUserId: secondUserId });
  });
});

securitySuite('asset checkout', () => ({ t, tenant: acme }), [
  {
    label: 'POST /assets/:id/checkout',
    method: 'POST',
    path: () => `/api/v1/assets/${foreignAssetId}/checkout`,
    scope: 'assets:write',
    body: { toProjectId: 'any-project' },
    crossTenant: true,
  },
  {
    label: 'POST /assets/:id/checkin',
    method: 'POST',
    path: () => `/api/v1/assets/${foreignAssetId}/checkin`,
    scope: 'assets:write',
    body: {},
    crossTenant: true,
  },
]);
