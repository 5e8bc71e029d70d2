import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/events/catalog.ts';
import { emit } from '../../src/events/outbox.ts';
import { transaction } from '../../src/db/transaction.ts';
import { createDelivery } from '../../src/delivery/delivery.ts';
import { EVENT_EXAMPLES } from '../../src/delivery/event-examples.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { makeAsset, makeWebhook } from '../helpers/app/factories.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { loadPublishedVerifier, silentLogger, startReceiver, type Receiver } from '../helpers/delivery/harness.ts';
import { TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

let t: TestApp;
let acme: TestTenant;
let receiver: Receiver;
let verifyWebhook: Awaited<ReturnType<typeof loadPublishedVerifier>>['verifyWebhook'];

beforeAll(async () => {
  receiver = await startReceiver();
  ({ verifyWebhook } = await loadPublishedVerifier());
  // The breaker has its own tests; here every attempt of a failing receiver must be made.
  t = await createTestApp({
    WEBHOOK_CA_FILE: receiver.caFile,
    WEBHOOK_RETRY_SCHEDULE: '0,0,0,0,0,0',
    WEBHOOK_BREAKER_FAILURES: '1000',
  });
  acme = await t.tenant('Acme');
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const dispatchOnce = () => t.deps.delivery.dispatcher.dispatchOnce();
const subscribe = async (path: string, events: string[], tenant = acme) =>
  makeWebhook(t, tenant.key, { url: `${receiver.origin}${path}`, events });
const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const deliveriesOf = (subscriptionId: string) =>
  t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId }, orderBy: { createdAt: 'asc' } });

describe('delivery over HTTPS', () => {
  it('POSTs the signed envelope with the legacy aliases; the published verifier accepts it', async () => {
    const { subscriptionId, secret } = await subscribe('/basic', ['asset.created']);
    const assetId = await makeAsset(t, acme.key, { nickname: 'Signed', assetClass: 'off-road' });
    const summary = await dispatchOnce();
    expect(summary.delivered).toBeGreaterThanOrEqual(1);
    const [req] = at('/basic');
    const [delivery] = await deliveriesOf(subscriptionId);
    expect(delivery).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
      nextAttemptAt: null,
      leaseUntil: null,
    });
    expect(delivery.deliveredAt).not.toBeNull();

    expect(Object.keys(req.json).sort()).toEqual(['data', 'event', 'eventId', 'id', 'organizationId', 'sentAt']);
    expect(req.json).toMatchObject({
      id: delivery.id,
      eventId: delivery.eventId,
      event: 'asset.created',
      organizationId: acme.orgId,
      data: { assetId, nickname: 'Signed', assetClass: 'off-road', actorId: acme.userId },
    });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-service-event']).toBe('asset.created');
    expect(req.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(Math.abs(Number(req.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    for (const h of ['signature', 'timestamp', 'event'])
      expect(req.headers[`x-legacy-${h}`]).toBe(req.headers[`x-service-${h}`]);
    expect(req.headers['x-service-test']).toBeUndefined();
    expect(Math.floor(new Date(req.json.sentAt).getTime() / 1000)).toBe(Number(req.headers['x-service-timestamp']));

    expect(verifyWebhook(req.rawBody, req.headers, secret)).toBe(true);
    // The verifier is not a rubber stamp: wrong secret, altered body, stale timestamp and the test key all fail.
    expect(verifyWebhook(req.rawBody, req.headers, `${secret}x`)).toBe(false);
    expect(verifyWebhook(Buffer.from(req.rawBody.toString().replace('Signed', 'Forged')), req.headers, secret)).toBe(
      false,
    );
    expect(verifyWebhook(req.rawBody, req.headers, secret, Number(req.headers['x-service-timestamp']) + 301)).toBe(
      false,
    );
    expect(
      verifyWebhook(
        req.rawBody,
        { ...req.headers, 'x-service-timestamp': String(Number(req.headers['x-service-timestamp']) + 1) },
        secret,
      ),
    ).toBe(false);
  });

  it('keeps the envelope id across retries, with a fresh signature each time', async () => {
    const { subscriptionId, secret } = await subscribe('/flaky', ['asset.created']);
    let calls = 0;
    receiver.respond = (req) => (req.path === '/flaky' && ++calls <= 2 ? { status: 500, body: 'boom' } : {});
    await makeAsset(t, acme.key, { nickname: 'Flaky', assetClass: 'trailer' });
    await dispatchOnce();
    const [failed] = await deliveriesOf(subscriptionId);
    expect(failed).toMatchObject({
      status: 'FAILED',
      attempts: 1,
      responseStatus: 500,
      responseBody: 'boom',
      error: 'receiver answered 500',
    });
    expect(failed.nextAttemptAt).not.toBeNull();
    await dispatchOnce();
    await dispatchOnce();
    receiver.respond = () => ({});
    const [done] = await deliveriesOf(subscriptionId);
    expect(done).toMatchObject({
      status: 'DELIVERED',
      attempts: 3,
      responseStatus: 200,
      error: null,
      nextAttemptAt: null,
    });
    const reqs = at('/flaky');
    expect(reqs).toHaveLength(3);
    expect(new Set(reqs.map((r) => r.json.id))).toEqual(new Set([done.id]));
    for (const r of reqs) expect(verifyWebhook(r.rawBody, r.headers, secret)).toBe(true);
  });

  it('retries on the schedule (1 + 6 attempts) and then ABANDONS', async () => {
    const { subscriptionId } = await subscribe('/down', ['asset.updated']);
    receiver.respond = (req) => (req.path === '/down' ? { status: 503, body: 'z'.repeat(700) } : {});
    const assetId = await makeAsset(t, acme.key, { nickname: 'Down', assetClass: 'trailer' });
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { nickname: 'Down 2' });
    for (let i = 1; i <= 7; i++) {
      await dispatchOnce();
      const [row] = await deliveriesOf(subscriptionId);
      expect(row.attempts).toBe(i);
      expect(row.status).toBe(i < 7 ? 'FAILED' : 'ABANDONED');
    }
    await dispatchOnce();
    receiver.respond = () => ({});
    const [row] = await deliveriesOf(subscriptionId);
    expect(row).toMatchObject({
      status: 'ABANDONED',
      attempts: 7,
      nextAttemptAt: null,
      responseStatus: 503,
      error: 'receiver answered 503',
    });
    expect(row.responseBody).toBe('z'.repeat(500));
    expect(at('/down')).toHaveLength(7);
  });

  it('treats a 3xx as a failure and never follows it', async () => {
    const { subscriptionId } = await subscribe('/moved', ['asset.created']);
    receiver.respond = (req) =>
      req.path === '/moved' ? { status: 301, headers: { location: `${receiver.origin}/elsewhere` } } : {};
    await makeAsset(t, acme.key, { nickname: 'Moved', assetClass: 'trailer' });
    await dispatchOnce();
    receiver.respond = () => ({});
    const [row] = await deliveriesOf(subscriptionId);
    expect(row).toMatchObject({
      status: 'FAILED',
      responseStatus: 301,
      error: 'receiver answered 301 (redirects are not followed)',
    });
    expect(at('/elsewhere')).toHaveLength(0);
    await t.api.delete(`/api/v1/webhooks/${subscriptionId}`, acme.key);
  });
});

describe('retry schedule from configuration', () => {
  it('schedules the next attempt after the configured delay and is not due before it', async () => {
    const slowRetry = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_RETRY_SCHEDULE: '30,120' });
    try {
      const tenant = await slowRetry.tenant();
      await makeWebhook(slowRetry, tenant.key, { url: `${receiver.origin}/later`, events: ['asset.created'] });
      receiver.respond = (req) => (req.path === '/later' ? { status: 500 } : {});
      await makeAsset(slowRetry, tenant.key, { nickname: 'Later', assetClass: 'trailer' });
      const dispatcher = slowRetry.deps.delivery.dispatcher;
      expect((await dispatcher.dispatchOnce()).failed).toBe(1);
      expect((await dispatcher.dispatchOnce()).claimed).toBe(0);
      receiver.respond = () => ({});
      const row = await slowRetry.db.prisma.webhookDelivery.findFirstOrThrow();
      const gapSec = (row.nextAttemptAt!.getTime() - row.lastAttemptAt!.getTime()) / 1000;
      expect(gapSec).toBeGreaterThan(28);
      expect(gapSec).toBeLessThan(35);
    } finally {
      await slowRetry.close();
    }
  });
});

describe('fan-out and the outbox', () => {
  it('delivers nothing for a rolled-back change', async () => {
    const { subscriptionId } = await subscribe('/rollback', ['asset.created']);
    await expect(
      transaction(t.db, async (tx) => {
        await tx.asset.create({
          data: { orgId: acme.orgId, nickname: 'Ghost', assetClass: 'TRAILER', meterType: 'NONE', meterUnit: 'none' },
        });
        await emit(tx, acme.orgId, 'asset.created', { ...EVENT_EXAMPLES['asset.created'], nickname: 'Ghost' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await dispatchOnce();
    expect(await deliveriesOf(subscriptionId)).toHaveLength(0);
    expect(at('/rollback')).toHaveLength(0);
    expect(await t.db.prisma.asset.count({ where: { nickname: 'Ghost' } })).toBe(0);
  });

  it('delivers every one of the 16 event types, each with its payload and a valid signature', async () => {
    const fresh = await t.tenant('Everything');
    const { secret } = await subscribe('/every', EVENT_TYPES, fresh);
    // asset.* through the API; the rest straight into the outbox (their resources are tested in their own areas).
    const assetId = await makeAsset(t, fresh.key, { nickname: 'All', assetClass: 'off-road' });
    await t.api.patch(`/api/v1/assets/${assetId}`, fresh.key, { nickname: 'All events' });
    await transaction(t.db, async (tx) => {
      for (const type of EVENT_TYPES)
        if (type !== 'asset.created' && type !== 'asset.updated')
          await emit(tx, fresh.orgId, type, EVENT_EXAMPLES[type] as never);
    });
    while ((await dispatchOnce()).claimed > 0);
    const reqs = at('/every');
    expect(new Set(reqs.map((r) => r.json.event))).toEqual(new Set(EVENT_TYPES));
    for (const r of reqs) {
      expect(verifyWebhook(r.rawBody, r.headers, secret)).toBe(true);
      expect(r.headers['x-service-event']).toBe(r.json.event);
      expect(r.json.organizationId).toBe(fresh.orgId);
      if (!r.json.event.startsWith('asset.'))
        expect(r.json.data).toEqual(EVENT_EXAMPLES[r.json.event as keyof typeof EVENT_EXAMPLES]);
    }
  });

  it('holds queued deliveries of a paused subscription until it is reactivated', async () => {
    const { subscriptionId } = await subscribe('/paused', ['asset.created']);
    await makeAsset(t, acme.key, { nickname: 'Held', assetClass: 'trailer' });
    await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: false });
    await dispatchOnce();
    expect(at('/paused')).toHaveLength(0);
    expect((await deliveriesOf(subscriptionId))[0].status).toBe('PENDING');
    await t.api.patch(`/api/v1/webhooks/${subscriptionId}`, acme.key, { active: true });
    await dispatchOnce();
    expect(at('/paused')).toHaveLength(1);
  });
});

describe('leases', () => {
  it('re-delivers rows of a claimer that died once its lease has expired, and not before', async () => {
    const { subscriptionId } = await subscribe('/crashed', ['asset.created']);
    await makeAsset(t, acme.key, { nickname: 'Crash', assetClass: 'trailer' });
    // A claimer that crashed right after claiming: the lease is set, no outcome was ever recorded.
    await t.db.prisma.webhookDelivery.updateMany({
      where: { subscriptionId },
      data: { leaseUntil: new Date(Date.now() + 60_000) },
    });
    await dispatchOnce();
    expect(at('/crashed')).toHaveLength(0);
    await t.db.prisma.webhookDelivery.updateMany({
      where: { subscriptionId },
      data: { leaseUntil: new Date(Date.now() - 1_000) },
    });
    await dispatchOnce();
    expect(at('/crashed')).toHaveLength(1);
    expect((await deliveriesOf(subscriptionId))[0]).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
      leaseUntil: null,
    });
  });

  it("does not let a dispatcher that lost its lease overwrite the new owner's row", async () => {
    const { subscriptionId } = await subscribe('/late', ['asset.created']);
    receiver.respond = (req) => (req.path === '/late' ? { delayMs: 400 } : {});
    await makeAsset(t, acme.key, { nickname: 'Late', assetClass: 'trailer' });
    const tick = dispatchOnce();
    await new Promise((r) => setTimeout(r, 200));
    // Meanwhile the lease ran out and another instance claimed the row.
    const newLease = new Date(Date.now() + 120_000);
    await t.db.prisma.webhookDelivery.updateMany({
      where: { subscriptionId },
      data: { leaseUntil: newLease, claimedBy: 'another-instance' },
    });
    await tick;
    receiver.respond = () => ({});
    const [row] = await deliveriesOf(subscriptionId);
    expect(row).toMatchObject({ status: 'PENDING', attempts: 0, leaseUntil: newLease, claimedBy: 'another-instance' });
    expect(
      t.logs.some(
        (l) => l.msg === 'webhook delivery outcome not recorded: row deleted or claim lost' && l.deliveryId === row.id,
      ),
    ).toBe(true);
    await t.db.prisma.webhookDelivery.updateMany({
      where: { subscriptionId },
      data: { leaseUntil: null, claimedBy: null },
    });
  });
});

describe('concurrency', () => {
  it('keeps sending to other receivers while one receiver is slow', async () => {
    const fast = await startReceiver();
    try {
      const fresh = await t.tenant('Slow and fast');
      await subscribe('/slow', ['tool.created'], fresh);
      await makeWebhook(t, fresh.key, { url: `${fast.origin}/fast`, events: ['tool.created'] });
      const slowDone: number[] = [];
      receiver.respond = (req) => {
        if (req.path !== '/slow') return {};
        setTimeout(() => slowDone.push(Date.now()), 800);
        return { delayMs: 800 };
      };
      const fastSeen: number[] = [];
      fast.respond = () => {
        fastSeen.push(Date.now());
        return {};
      };
      await transaction(t.db, async (tx) => {
        for (let i = 0; i < 6; i++)
          await emit(tx, fresh.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `t${i}` });
      });
      const summary = await dispatchOnce();
      receiver.respond = () => ({});
      expect(summary.delivered).toBeGreaterThanOrEqual(12);
      expect(at('/slow')).toHaveLength(6);
      // Every fast delivery arrived before the first slow answer, although slow rows were claimed alongside.
      expect(fastSeen).toHaveLength(6);
      expect(Math.max(...fastSeen)).toBeLessThan(Math.min(...slowDone));
    } finally {
      await fast.close();
    }
  });
});

describe('per-tick cap (WEBHOOK_BATCH_SIZE, spec: up to 50 per tick)', () => {
  it('claims at most batchSize due deliveries in one tick and the rest on the next', async () => {
    const fresh = await t.tenant('Capped');
    await subscribe('/capped', ['asset.created'], fresh);
    await t.api.post(
      '/api/v1/assets/batch',
      fresh.key,
      Array.from({ length: 7 }, (_, i) => ({ nickname: `Cap ${i}`, assetClass: 'trailer' })),
    );
    const config = loadConfig({
      SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
      WEBHOOK_DISPATCH_MODE: 'tick',
      WEBHOOK_BATCH_SIZE: '5',
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const delivery = createDelivery({ db: t.db, config, log: silentLogger() });
    const capped = delivery.dispatcher;
    try {
      // Other tests' rows may be due too; count only this subscription's deliveries.
      const before = at('/capped').length;
      const first = await capped.dispatchOnce();
      expect(first.claimed).toBeLessThanOrEqual(5);
      while ((await capped.dispatchOnce()).claimed > 0);
      expect(at('/capped').length - before).toBe(7);
      expect(loadConfig({}).webhooks.batchSize).toBe(50);
    } finally {
      await delivery.close();
    }
  });
});
