import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/core/clock.ts';
import { JOBS } from '../../../src/jobs/jobs.ts';
import { createWebhookRepository } from '../../../src/modules/webhooks/webhooks.repository.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeWebhook } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { startReceiver, type Receiver } from '../../helpers/delivery/harness.ts';

/** The service's clock, moved forward by the test instead of sleeping. */
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
const MIN = 60_000;

let t: TestApp;
let acme: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  // A shortened period: one hour of nothing but failures disables a subscription. Retries are an hour apart
  // (never due during the test) and the breaker never opens, so each new event is one attempt.
  t = await createTestApp(
    {
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_AUTO_DISABLE_AFTER_SEC: '3600',
      WEBHOOK_RETRY_SCHEDULE: '3600,3600',
      WEBHOOK_BREAKER_FAILURES: '1000',
    },
    { clock },
  );
  acme = await t.tenant('Acme');
  receiver.respond = (req) => (req.path.startsWith('/dead') ? { status: 500, body: 'still down' } : {});
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const sweep = () => t.deps.services.webhookRecovery.disableFailing();
const subscribe = (path: string) =>
  makeWebhook(t, acme.key, { url: `${receiver.origin}${path}`, events: ['asset.created'] });
const detail = async (id: string) => (await t.api.get(`/api/v1/webhooks/${id}`, acme.key)).json().webhook;
/** One event for every subscription, sent at the clock's current time. */
async function eventAt(minutes: number) {
  offsetMs = minutes * MIN;
  await makeAsset(t, acme.key, { nickname: `At ${minutes}`, assetClass: 'trailer' });
  await t.deps.delivery.dispatcher.dispatchOnce();
}

/** `n` deliveries queued for the subscription (PENDING), each for an event of its own. */
const queue = (subscriptionId: string, n: number) =>
  t.db.sql.exec(
    `WITH e AS (
       INSERT INTO events (id, "orgId", type, data)
       SELECT gen_random_uuid()::text, '${acme.orgId}', 'asset.created', '{}'::jsonb FROM generate_series(1, ${n})
       RETURNING id
     )
     INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
     SELECT gen_random_uuid()::text, '${acme.orgId}', '${subscriptionId}', e.id, 'asset.created' FROM e`,
  );

describe('failing endpoints are disabled automatically', () => {
  it('disables a subscription whose every attempt failed for the period, notifies, stops queueing, and re-enables', async () => {
    const dead = await subscribe('/dead');
    const flaky = await subscribe('/dead-then-ok');
    const healthy = await subscribe('/ok');
    await eventAt(0);
    expect(await detail(dead.subscriptionId)).toMatchObject({ active: true, failingSince: expect.any(String) });
    expect((await detail(healthy.subscriptionId)).failingSince).toBeNull();

    await eventAt(30);
    // /dead-then-ok recovers at minute 45: a success clears its failing streak.
    receiver.respond = (req) => (req.path === '/dead' ? { status: 500, body: 'still down' } : {});
    await eventAt(45);
    receiver.respond = (req) => (req.path.startsWith('/dead') ? { status: 500, body: 'still down' } : {});
    expect((await detail(flaky.subscriptionId)).failingSince).toBeNull();

    // Before the period has passed: nothing happens.
    offsetMs = 59 * MIN;
    expect(await sweep()).toEqual([]);
    await eventAt(50);

    offsetMs = 61 * MIN;
    const disabled = await sweep();
    expect(disabled.map((d) => d.id)).toEqual([dead.subscriptionId]);
    expect(await sweep()).toEqual([]); // already disabled: once

    const webhook = await detail(dead.subscriptionId);
    expect(webhook.active).toBe(false);
    expect(Math.abs(new Date(webhook.disabledAt).getTime() - clock.now().getTime())).toBeLessThan(30_000);
    expect(webhook.disabledReason).toMatch(/^disabled automatically: every delivery attempt failed for 1 hour since /);
    for (const other of [flaky, healthy]) expect((await detail(other.subscriptionId)).active).toBe(true);

    // Queued deliveries are abandoned with the reason (history shows why), keeping the last answer.
    const history = (await t.api.get(`/api/v1/webhooks/${dead.subscriptionId}/deliveries`, acme.key)).json();
    expect(history.deliveries).toHaveLength(4);
    for (const d of history.deliveries) {
      expect(d).toMatchObject({ status: 'ABANDONED', nextAttemptAt: null, responseStatus: 500 });
      expect(d.error).toBe(
        `not sent: subscription disabled (${webhook.disabledReason}); last error: receiver answered 500`,
      );
    }

    // The organisation's people are notified through the notification channel, once.
    const notes = await t.db.prisma.notification.findMany({ where: { orgId: acme.orgId, kind: 'webhook.disabled' } });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ channel: 'EMAIL', status: 'PENDING' });
    expect(notes[0].subject).toContain('/dead');
    expect(notes[0].payload).toMatchObject({
      subscriptionId: dead.subscriptionId,
      reason: webhook.disabledReason,
      recipients: [expect.objectContaining({ userId: acme.userId })],
    });
    expect((await t.deps.services.notifications.sendPending()).sent).toBeGreaterThanOrEqual(1);

    // New events no longer queue for it.
    await eventAt(62);
    expect(await t.db.prisma.webhookDelivery.count({ where: { subscriptionId: dead.subscriptionId } })).toBe(4);

    // PATCH active: true re-enables it, clears the reason and starts its health afresh.
    const patched = await t.api.patch(`/api/v1/webhooks/${dead.subscriptionId}`, acme.key, { active: true });
    expect(patched.json().webhook).toMatchObject({
      active: true,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
    });
    await eventAt(63);
    expect(await t.db.prisma.webhookDelivery.count({ where: { subscriptionId: dead.subscriptionId } })).toBe(5);
    offsetMs = 70 * MIN;
    expect(await sweep()).toEqual([]); // one fresh failure is not a period of them
    offsetMs = 0;
  });

  it('does not disable a subscription whose failures stopped (nothing sent in the last day or period)', async () => {
    const quiet = await subscribe('/dead-quiet');
    await eventAt(100);
    await t.api.patch(`/api/v1/webhooks/${quiet.subscriptionId}`, acme.key, { events: [] });
    // The streak is old enough, but its last failure is older than the recent window (the period here).
    offsetMs = (100 + 61) * MIN;
    expect((await sweep()).map((d) => d.id)).not.toContain(quiet.subscriptionId);
    expect((await detail(quiet.subscriptionId)).active).toBe(true);
    offsetMs = 0;
  });

  it('shows a manual pause with its own reason, which PATCH active: true clears', async () => {
    const { subscriptionId } = await subscribe('/paused');
    offsetMs = 0;
    const paused = (await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: false })).json();
    expect(paused.webhook).toMatchObject({ active: false, disabledReason: 'paused with PATCH active: false' });
    expect(paused.webhook.disabledAt).toEqual(expect.any(String));
    const resumed = (await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: true })).json();
    expect(resumed.webhook).toMatchObject({ active: true, disabledReason: null, disabledAt: null });
  });

  it("abandons a disabled subscription's backlog in bounded statements, and only while it stays disabled", async () => {
    const { subscriptionId } = await subscribe('/backlog');
    await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: false });
    await queue(subscriptionId, 7);
    const repository = createWebhookRepository(t.db);
    const runs = [];
    for (let i = 0; i < 4; i++) runs.push(await repository.abandonQueued([subscriptionId], 3));
    expect(runs.map((r) => r.picked)).toEqual([3, 3, 1, 0]);
    expect(runs.map((r) => r.moved[0]?.n ?? 0)).toEqual([3, 3, 1, 0]);
    const rows = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId } });
    expect(rows.map((r) => r.status)).toEqual(Array(7).fill('ABANDONED'));
    expect(rows[0].error).toBe('not sent: subscription disabled (paused with PATCH active: false)');
    // Re-enabled before the rest was abandoned: what is still queued is sent, not abandoned.
    await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: true });
    await queue(subscriptionId, 2);
    expect(await repository.abandonQueued([subscriptionId], 3)).toEqual({ picked: 0, moved: [] });
  });

  it('finishes the backlog of a sweep that stopped after disabling (a crash between the two steps)', async () => {
    const { subscriptionId } = await subscribe('/crashed');
    await queue(subscriptionId, 2);
    await t.db.sql.query(
      `UPDATE webhook_subscriptions SET active = false,
         "disabledReason" = 'disabled automatically: every delivery attempt failed for 1 hour since earlier'
       WHERE id = $1`,
      [subscriptionId],
    );
    offsetMs = 0;
    expect((await sweep()).map((d) => d.id)).not.toContain(subscriptionId); // disabled before, not now
    const rows = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId } });
    expect(rows.map((r) => r.status)).toEqual(['ABANDONED', 'ABANDONED']);
  });

  it('runs as a registered job, and not at all when the period is 0', async () => {
    const job = JOBS.map((make) => make(t.deps)).find((j) => j?.name === 'webhook-auto-disable');
    expect(job?.cron).toBe('*/10 * * * *');
    const off = {
      ...t.deps,
      config: { ...t.deps.config, webhooks: { ...t.deps.config.webhooks, autoDisableAfterSec: 0 } },
    };
    expect(JOBS.map((make) => make(off)).find((j) => j?.name === 'webhook-auto-disable')).toBeUndefined();
  });
});
