import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeWebhook } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { startReceiver, type Receiver } from '../../helpers/delivery/harness.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let receiver: Receiver;
let foreign: { subscriptionId: string; deliveryId: string };

beforeAll(async () => {
  receiver = await startReceiver();
  // One retry right away, so an outage ABANDONS deliveries in two passes; the breaker has its own tests.
  t = await createTestApp({
    WEBHOOK_CA_FILE: receiver.caFile,
    WEBHOOK_RETRY_SCHEDULE: '0',
    WEBHOOK_BREAKER_FAILURES: '1000',
  });
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  const theirs = await makeWebhook(t, other.key, { url: `${receiver.origin}/theirs`, events: ['asset.created'] });
  await makeAsset(t, other.key, { nickname: 'Theirs', assetClass: 'trailer' });
  const [row] = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId: theirs.subscriptionId } });
  foreign = { subscriptionId: theirs.subscriptionId, deliveryId: row.id };
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const dispatchOnce = () => t.deps.delivery.dispatcher.dispatchOnce();
const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const rowsOf = (subscriptionId: string) =>
  t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
const resend = (id: string, deliveryId: string, key = acme.key) =>
  t.api.post(`/api/v1/webhooks/${id}/deliveries/${deliveryId}/resend`, key);
const recover = (id: string, body: unknown, key = acme.key) => t.api.post(`/api/v1/webhooks/${id}/recover`, key, body);
/** A subscription to tool-free asset events at its own path, with `n` assets created (n deliveries queued). */
async function subscriptionWith(path: string, n: number) {
  const sub = await makeWebhook(t, acme.key, { url: `${receiver.origin}${path}`, events: ['asset.updated'] });
  for (let i = 0; i < n; i++) {
    const assetId = await makeAsset(t, acme.key, { nickname: `${path} ${i}`, assetClass: 'trailer' });
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { nickname: `${path} ${i}'` });
  }
  return sub;
}
/** Dispatches until nothing is due (bounded). */
async function drain() {
  for (let i = 0; i < 20; i++) if ((await dispatchOnce()).claimed === 0) return;
  throw new Error('the queue did not drain');
}
const down = (path: string) => (receiver.respond = (req) => (req.path === path ? { status: 503, body: 'down' } : {}));
const up = () => (receiver.respond = () => ({}));

describe('POST /webhooks/{id}/recover', () => {
  it('after a receiver outage delivers every missed event exactly once, with its original envelope id', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const { subscriptionId } = await subscriptionWith('/outage', 5);
    down('/outage');
    await drain();
    const missed = await rowsOf(subscriptionId);
    expect(missed.map((r) => r.status)).toEqual(Array(5).fill('ABANDONED'));
    expect(at('/outage')).toHaveLength(10); // two attempts each, all answered 503
    up();

    const res = await recover(subscriptionId, { since });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, requeued: 5, since, nextCursor: null });
    // Recovering the same window again before anything was sent re-queues nothing more.
    expect((await recover(subscriptionId, { since })).json().requeued).toBe(0);
    const queued = await rowsOf(subscriptionId);
    expect(queued.map((r) => [r.status, r.attempts])).toEqual(Array(5).fill(['PENDING', 0]));
    expect(queued[0].requeues).toEqual([
      expect.objectContaining({
        via: 'recover',
        actorId: acme.userId,
        previousStatus: 'ABANDONED',
        previousAttempts: 2,
      }),
    ]);

    await drain();
    const delivered = at('/outage').slice(10);
    expect(delivered).toHaveLength(5);
    expect(delivered.map((r) => r.json.id).sort()).toEqual(missed.map((r) => r.id).sort());
    expect(delivered.map((r) => r.headers['webhook-id']).sort()).toEqual(missed.map((r) => r.id).sort());
    const after = await rowsOf(subscriptionId);
    expect(after.map((r) => [r.status, r.attempts])).toEqual(Array(5).fill(['DELIVERED', 1]));

    // Delivered rows are not FAILED or ABANDONED: a later recover of the window sends nothing again.
    expect((await recover(subscriptionId, { since })).json().requeued).toBe(0);
    await drain();
    expect(at('/outage')).toHaveLength(15);
    // History shows what happened.
    const history = (await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries`, acme.key)).json();
    expect(history.deliveries[0]).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
      requeues: [{ via: 'recover', previousStatus: 'ABANDONED', previousAttempts: 2 }],
    });
  });

  it('brings FAILED deliveries waiting for a retry forward, and only those inside the window', async () => {
    const slow = await makeWebhook(t, acme.key, { url: `${receiver.origin}/window`, events: ['asset.updated'] });
    const assetId = await makeAsset(t, acme.key, { nickname: 'Window', assetClass: 'trailer' });
    for (let i = 0; i < 3; i++) await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { nickname: `Window ${i}` });
    down('/window');
    await dispatchOnce();
    up();
    const rows = await rowsOf(slow.subscriptionId);
    expect(rows.map((r) => r.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    // Retries are "0 s" away in this file: push them into the future and spread the creation times.
    for (const [i, r] of rows.entries())
      await t.db.prisma.webhookDelivery.updateMany({
        where: { id: r.id },
        data: { nextAttemptAt: new Date(Date.now() + 3600_000), createdAt: new Date(Date.UTC(2026, 10, 1 + i)) },
      });
    const res = await recover(slow.subscriptionId, { since: '2026-11-02', until: '2026-11-03T00:00:00Z' });
    expect(res.json()).toMatchObject({ requeued: 1, until: '2026-11-03T00:00:00.000Z' });
    const after = await rowsOf(slow.subscriptionId);
    expect(after.map((r) => [r.status, r.attempts, r.nextAttemptAt!.getTime() <= Date.now()])).toEqual([
      ['FAILED', 1, false],
      ['FAILED', 1, true],
      ['FAILED', 1, false],
    ]);
    expect((await recover(slow.subscriptionId, { since: '2026-11-02', until: '2026-11-03' })).json().requeued).toBe(0);
  });

  it('re-queues at most 1,000 per call and continues the window with nextCursor', async () => {
    const { subscriptionId } = await makeWebhook(t, acme.key, {
      url: `${receiver.origin}/many`,
      events: ['asset.created'],
    });
    // 1,005 abandoned deliveries, written directly (the API would need 1,005 events).
    await t.db.sql.query(
      `WITH ev AS (
         INSERT INTO events (id, "orgId", type, data, "createdAt")
         SELECT 'bulk-' || g, $1, 'asset.created', '{}'::jsonb, timestamptz '2026-11-10' + g * interval '1 second'
         FROM generate_series(1, 1005) g RETURNING id, "createdAt")
       INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", status, attempts, "nextAttemptAt", "createdAt")
       SELECT 'bulk-d-' || ev.id, $1, $2, ev.id, 'asset.created', 'ABANDONED', 7, NULL, ev."createdAt" FROM ev`,
      [acme.orgId, subscriptionId],
    );
    const body = { since: '2026-11-10', until: '2026-11-11' };
    const first = (await recover(subscriptionId, body)).json();
    expect(first.requeued).toBe(1000);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await recover(subscriptionId, { ...body, cursor: first.nextCursor })).json();
    expect(second).toMatchObject({ requeued: 5, nextCursor: null });
    const counts = await t.db.prisma.webhookDelivery.groupBy({
      by: ['status'],
      where: { subscriptionId },
      _count: { _all: true },
    });
    expect(counts).toEqual([{ status: 'PENDING', _count: { _all: 1005 } }]);
    await t.db.prisma.webhookDelivery.deleteMany({ where: { subscriptionId } });
  });

  it('answers 422 for a bad window or cursor and 409 while the subscription is inactive', async () => {
    const { subscriptionId } = await makeWebhook(t, acme.key, { url: `${receiver.origin}/x`, events: [] });
    const bad = async (body: unknown, field: string) => {
      const res = await recover(subscriptionId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.json().fieldErrors)).toContain(field);
    };
    await bad({}, 'since');
    await bad({ since: 'yesterday' }, 'since');
    await bad({ since: '2026-11-02', until: '2026-11-01' }, 'until');
    await bad({ since: '2026-11-02', cursor: 'not-ours' }, 'cursor');
    await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: false });
    const res = await recover(subscriptionId, { since: '2026-11-01' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'webhook_inactive' });
    expect(res.json().message).toMatch(/paused with PATCH active: false/);
  });
});

describe('POST /webhooks/{id}/deliveries/{deliveryId}/resend', () => {
  it('queues a delivered event again with the same envelope id; a second resend before it is sent changes nothing', async () => {
    const { subscriptionId } = await subscriptionWith('/resend', 1);
    await drain();
    const [delivered] = await rowsOf(subscriptionId);
    expect(delivered.status).toBe('DELIVERED');
    const res = await resend(subscriptionId, delivered.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      requeued: true,
      delivery: {
        id: delivered.id,
        status: 'PENDING',
        attempts: 0,
        deliveredAt: null,
        requeues: [{ via: 'resend', actorId: acme.userId, previousStatus: 'DELIVERED', previousAttempts: 1 }],
      },
    });
    const again = (await resend(subscriptionId, delivered.id)).json();
    expect(again).toMatchObject({ requeued: false, delivery: { status: 'PENDING' } });
    expect(again.delivery.requeues).toHaveLength(1);
    await drain();
    const sent = at('/resend');
    expect(sent).toHaveLength(2);
    expect(sent.map((r) => r.json.id)).toEqual([delivered.id, delivered.id]);
    expect(sent[1].json.eventId).toBe(sent[0].json.eventId);
    const [row] = await rowsOf(subscriptionId);
    expect(row).toMatchObject({ status: 'DELIVERED', attempts: 1 });
  });

  it('brings a FAILED delivery forward without resetting its attempts, and leaves an in-flight one alone', async () => {
    const { subscriptionId } = await subscriptionWith('/resend-failed', 1);
    down('/resend-failed');
    await dispatchOnce();
    up();
    const [failed] = await rowsOf(subscriptionId);
    await t.db.prisma.webhookDelivery.updateMany({
      where: { id: failed.id },
      data: { nextAttemptAt: new Date(Date.now() + 3600_000) },
    });
    const res = (await resend(subscriptionId, failed.id)).json();
    expect(res).toMatchObject({ requeued: true, delivery: { status: 'FAILED', attempts: 1 } });
    expect(new Date(res.delivery.nextAttemptAt).getTime()).toBeLessThanOrEqual(Date.now());
    // Claimed by a dispatcher (a live lease): nothing changes.
    await t.db.prisma.webhookDelivery.updateMany({
      where: { id: failed.id },
      data: { nextAttemptAt: new Date(Date.now() + 3600_000), leaseUntil: new Date(Date.now() + 60_000) },
    });
    expect((await resend(subscriptionId, failed.id)).json().requeued).toBe(false);
    await t.db.prisma.webhookDelivery.updateMany({ where: { id: failed.id }, data: { leaseUntil: null } });
  });

  it('answers 404 for a delivery of another subscription or an unknown one, 409 while inactive', async () => {
    const a = await subscriptionWith('/resend-a', 1);
    const b = await subscriptionWith('/resend-b', 0);
    const [row] = await rowsOf(a.subscriptionId);
    expect((await resend(b.subscriptionId, row.id)).statusCode).toBe(404);
    expect((await resend(a.subscriptionId, 'nope')).statusCode).toBe(404);
    expect((await resend(a.subscriptionId, foreign.deliveryId)).statusCode).toBe(404);
    await t.api.patch(`/api/v1/webhooks/${a.subscriptionId}`, acme.key, { active: false });
    const res = await resend(a.subscriptionId, row.id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('webhook_inactive');
  });

  it('keeps the last 20 re-queues in the log', async () => {
    const { subscriptionId } = await subscriptionWith('/resend-log', 1);
    const [row] = await rowsOf(subscriptionId);
    await t.db.prisma.webhookDelivery.updateMany({ where: { id: row.id }, data: { status: 'ABANDONED' } });
    for (let i = 0; i < 22; i++) {
      expect((await resend(subscriptionId, row.id)).json().requeued).toBe(true);
      await t.db.prisma.webhookDelivery.updateMany({
        where: { id: row.id },
        data: { status: 'ABANDONED', attempts: i },
      });
    }
    const log = (await resend(subscriptionId, row.id)).json().delivery.requeues;
    expect(log).toHaveLength(20);
    expect(log.at(-1)).toMatchObject({ previousAttempts: 21 });
  });
});

securitySuite('webhook resend and recover', () => ({ t, tenant: acme }), [
  {
    label: 'POST /webhooks/:id/deliveries/:deliveryId/resend',
    method: 'POST',
    path: () => `/api/v1/webhooks/${foreign.subscriptionId}/deliveries/${foreign.deliveryId}/resend`,
    scope: 'events:write',
    crossTenant: true,
  },
  {
    label: 'POST /webhooks/:id/recover',
    method: 'POST',
    path: () => `/api/v1/webhooks/${foreign.subscriptionId}/recover`,
    scope: 'events:write',
    body: { since: '2026-11-01' },
    crossTenant: true,
  },
]);
