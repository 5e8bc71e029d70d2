import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../../src/db/transaction.ts';
import { EVENT_EXAMPLES } from '../../src/delivery/event-examples.ts';
import { createDelivery } from '../../src/delivery/delivery.ts';
import { loadConfig } from '../../src/config.ts';
import { emit } from '../../src/events/outbox.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { makeAsset, makeWebhook } from '../helpers/app/factories.ts';
import { onPostgres } from '../helpers/db/test-database.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { eventually, silentLogger, startReceiver, type Receiver } from '../helpers/delivery/harness.ts';
import { TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

let receiver: Receiver;
const apps: TestApp[] = [];
beforeAll(async () => {
  receiver = await startReceiver();
});
// Each test's app stops with it: a dispatcher left running keeps retrying its test's failing receivers.
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
afterAll(async () => {
  await receiver.close();
});

/** An app whose dispatcher runs (as in main.ts); the poll is slow unless a test wants it, so only wake-ups count. */
async function running(env: Record<string, string> = {}) {
  const t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_POLL_MS: '60000', ...env });
  apps.push(t);
  await t.deps.delivery.start();
  return t;
}
const subscribe = async (t: TestApp, tenant: TestTenant, url: string, events = ['tool.created']) =>
  await makeWebhook(t, tenant.key, { url, events });
const emitTools = (t: TestApp, orgId: string, n: number, prefix = 'tool') =>
  transaction(t.db, async (tx) => {
    for (let i = 0; i < n; i++)
      await emit(tx, orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `${prefix}-${i}` });
  });
const hits = (path: string) => receiver.requests.filter((r) => r.path === path);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('wake-up on commit', () => {
  it('delivers a committed event at once, without waiting for the tick or the poll, and nothing for a rollback', async () => {
    const t = await running();
    const acme = await t.tenant('Wake');
    await subscribe(t, acme, `${receiver.origin}/wake`, ['asset.created']);
    const started = Date.now();
    await makeAsset(t, acme.key, { nickname: 'Prompt', assetClass: 'trailer' });
    await eventually(() => hits('/wake').length === 1, 3_000);
    expect(Date.now() - started).toBeLessThan(2_000);

    await expect(
      transaction(t.db, async (tx) => {
        await emit(tx, acme.orgId, 'asset.created', { ...EVENT_EXAMPLES['asset.created'], nickname: 'Ghost' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await sleep(300);
    expect(hits('/wake')).toHaveLength(1);
  });
});

describe('head-of-line isolation', () => {
  it('delivers a healthy tenant promptly beside a hanging receiver and a receiver answering 500', async () => {
    const t = await running({ WEBHOOK_TIMEOUT_MS: '8000', WEBHOOK_RETRY_SCHEDULE: '0,0,0,0,0,0' });
    const [hanging, failing, healthy] = [await t.tenant('Hangs'), await t.tenant('Fails'), await t.tenant('Healthy')];
    await subscribe(t, hanging, `${receiver.origin}/hol-hang`);
    await subscribe(t, failing, `${receiver.origin}/hol-500`);
    await subscribe(t, healthy, `${receiver.origin}/hol-ok`);
    receiver.respond = (req) =>
      req.path === '/hol-hang' ? { delayMs: 10_000 } : req.path === '/hol-500' ? { status: 500 } : {};
    try {
      await emitTools(t, hanging.orgId, 100, 'hang');
      await emitTools(t, failing.orgId, 100, 'fail');
      await eventually(() => hits('/hol-hang').length > 0 && hits('/hol-500').length > 0, 3_000);
      const started = Date.now();
      await emitTools(t, healthy.orgId, 20, 'ok');
      // Inside the hanging receiver's 8 s timeout, so nothing waited for it; the rest of it is a busy machine's margin.
      await eventually(() => hits('/hol-ok').length === 20, 7_500);
      expect(Date.now() - started).toBeLessThan(7_500);
      // The hanging subscription holds only its share of the senders.
      expect(hits('/hol-hang').length).toBeLessThanOrEqual(t.deps.config.webhooks.subscriptionConcurrency);
    } finally {
      receiver.respond = () => ({});
    }
  });

  it("keeps a hanging receiver's claimed backlog from taking another tenant's capacity", async () => {
    // Half the process's senders are the hanging subscription's share; the rows it has claimed ahead and that
    // wait behind its hung sends must not count against the other half.
    const t = await running({
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: '2',
      WEBHOOK_TIMEOUT_MS: '8000',
    });
    const [hanging, healthy] = [await t.tenant('Hangs ahead'), await t.tenant('Healthy beside')];
    await subscribe(t, hanging, `${receiver.origin}/cap-hang`);
    await subscribe(t, healthy, `${receiver.origin}/cap-ok`);
    receiver.respond = (req) => (req.path === '/cap-hang' ? { delayMs: 10_000 } : {});
    try {
      await emitTools(t, hanging.orgId, 40, 'hang');
      await eventually(() => hits('/cap-hang').length === 2, 3_000);
      await sleep(200); // its claims ahead have landed
      const started = Date.now();
      await emitTools(t, healthy.orgId, 5, 'ok');
      // Inside the hanging receiver's 8 s timeout, so nothing waited for it; the rest of it is a busy machine's margin.
      await eventually(() => hits('/cap-ok').length === 5, 7_500);
      expect(Date.now() - started).toBeLessThan(7_500);
      expect(hits('/cap-hang')).toHaveLength(2);
    } finally {
      receiver.respond = () => ({});
    }
  });
});

describe('fairness between busy subscriptions', () => {
  it("shares the senders between two backlogs, never beyond a subscription's share", async () => {
    const t = await running({ WEBHOOK_CONCURRENCY: '4', WEBHOOK_SUBSCRIPTION_CONCURRENCY: '2' });
    const [a, b] = [await t.tenant('Busy A'), await t.tenant('Busy B')];
    await subscribe(t, a, `${receiver.origin}/fair-a`);
    await subscribe(t, b, `${receiver.origin}/fair-b`);
    const active = { '/fair-a': 0, '/fair-b': 0 } as Record<string, number>;
    const peak = { '/fair-a': 0, '/fair-b': 0 } as Record<string, number>;
    const order: string[] = [];
    receiver.respond = (req) => {
      if (!(req.path in active)) return {};
      order.push(req.path);
      peak[req.path] = Math.max(peak[req.path], ++active[req.path]);
      setTimeout(() => active[req.path]--, 20);
      return { delayMs: 20 };
    };
    try {
      // One commit, A's whole backlog older than B's: oldest-first alone would send all of A before any of B.
      await transaction(t.db, async (tx) => {
        for (let i = 0; i < 60; i++)
          await emit(tx, a.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `a-${i}` });
        for (let i = 0; i < 60; i++)
          await emit(tx, b.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `b-${i}` });
      });
      await eventually(() => order.length === 120, 10_000);
      const firstHalf = order.slice(0, 60);
      expect(firstHalf.filter((p) => p === '/fair-b').length).toBeGreaterThanOrEqual(24);
      expect(peak['/fair-a']).toBeLessThanOrEqual(2);
      expect(peak['/fair-b']).toBeLessThanOrEqual(2);
    } finally {
      receiver.respond = () => ({});
    }
  });
});

describe('circuit breaker', () => {
  it('records due attempts unsent while open (they count, the error says why), probes at the shortest retry delay, closes on success', async () => {
    const t = await createTestApp({
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: '1',
      WEBHOOK_BREAKER_FAILURES: '3',
    });
    apps.push(t);
    const { dispatcher, breakers } = t.deps.delivery;
    const acme = await t.tenant('Breaker');
    const { subscriptionId } = await subscribe(t, acme, `${receiver.origin}/breaker`);
    const rows = () => t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId }, orderBy: { id: 'asc' } });
    const attempts = async () => (await rows()).reduce((n, r) => n + r.attempts, 0);
    receiver.respond = (req) => (req.path === '/breaker' ? { status: 503 } : {});
    try {
      await emitTools(t, acme.orgId, 5, 'br');
      for (let i = 0; i < 2; i++) expect(await dispatcher.dispatchOnce()).toMatchObject({ claimed: 1, failed: 1 });
      // The third failure opens it: the two rows still due are attempted at once, without a send, and scheduled
      // for their next retry.
      expect(await dispatcher.dispatchOnce()).toMatchObject({ claimed: 1, failed: 3, skipped: 2 });
      expect(breakers.stateOf(subscriptionId)).toBe('open');
      expect(await dispatcher.dispatchOnce()).toMatchObject({ claimed: 0, failed: 0 });
      expect(await attempts()).toBe(5);
      expect(hits('/breaker')).toHaveLength(3);
      const unsent = (await rows()).filter((r) => r.error?.startsWith('not sent'));
      expect(unsent).toHaveLength(2);
      expect(unsent[0].status).toBe('FAILED');
      expect(unsent[0].nextAttemptAt).not.toBeNull();
      expect(unsent[0].error).toMatch(
        /^not sent: receiver failing since .+Z \(circuit open after 3 consecutive failures; last: receiver answered 503\)$/,
      );

      // The cooldown (30 s by default) is capped to the shortest retry delay: half-open after 1 s.
      await sleep(1_050);
      expect(breakers.stateOf(subscriptionId)).toBe('half-open');
      // One probe (failing), then the other due rows are recorded unsent behind the re-opened breaker.
      expect(await dispatcher.dispatchOnce()).toMatchObject({ claimed: 1, failed: 5, skipped: 4 });
      expect(breakers.stateOf(subscriptionId)).toBe('open');
      expect(hits('/breaker')).toHaveLength(4);

      receiver.respond = () => ({});
      await sleep(1_050);
      expect(await dispatcher.dispatchOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(breakers.stateOf(subscriptionId)).toBe('closed');
      while ((await dispatcher.dispatchOnce()).claimed > 0);
      expect((await rows()).map((r) => r.status)).toEqual(Array(5).fill('DELIVERED'));
      expect(hits('/breaker')).toHaveLength(4 + 5);
    } finally {
      receiver.respond = () => ({});
    }
  });
});

describe('leases', () => {
  it('renews a short lease while a send outlasts it, so another instance never sends the row twice', async () => {
    const t = await running({ WEBHOOK_LEASE_SEC: '1' });
    const other = createDelivery({
      db: t.db,
      log: silentLogger(),
      config: loadConfig({
        SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_CA_FILE: receiver.caFile,
        WEBHOOK_LEASE_SEC: '1',
        INSTANCE_ID: 'the-other-instance',
      }),
    });
    const acme = await t.tenant('Lease');
    const { subscriptionId } = await subscribe(t, acme, `${receiver.origin}/lease`);
    receiver.respond = (req) => (req.path === '/lease' ? { delayMs: 2_500 } : {});
    try {
      await emitTools(t, acme.orgId, 1, 'lease');
      await eventually(() => hits('/lease').length === 1, 2_000);
      // The other instance keeps trying to claim (not start(): on PGlite that would free every claim as stale).
      for (const until = Date.now() + 1_800; Date.now() < until; await sleep(100))
        expect((await other.dispatcher.dispatchOnce()).claimed).toBe(0);
      const row = await t.db.prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId } });
      expect(row.claimedBy).toBe(t.deps.config.instanceId);
      expect(row.leaseUntil!.getTime()).toBeGreaterThan(Date.now());
      await eventually(
        async () =>
          (await t.db.prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId } })).status === 'DELIVERED',
        3_000,
      );
      expect(hits('/lease')).toHaveLength(1);
    } finally {
      receiver.respond = () => ({});
      await other.close();
    }
  });

  it("frees this instance's own stale claims at start-up instead of waiting for the lease", async () => {
    const t = await createTestApp({
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_POLL_MS: '60000',
      INSTANCE_ID: 'api-restarting',
    });
    apps.push(t);
    const acme = await t.tenant('Restart');
    const { subscriptionId } = await subscribe(t, acme, `${receiver.origin}/stale`);
    await emitTools(t, acme.orgId, 2, 'stale');
    // As a crash leaves them: claimed by this instance's previous run, lease far away; one by someone else.
    const leaseUntil = new Date(Date.now() + 600_000);
    const [mine, theirs] = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId } });
    await t.db.prisma.webhookDelivery.updateMany({
      where: { id: mine.id },
      data: { claimedBy: 'api-restarting', leaseUntil },
    });
    await t.db.prisma.webhookDelivery.updateMany({
      where: { id: theirs.id },
      data: { claimedBy: 'api-elsewhere', leaseUntil },
    });
    await t.deps.delivery.start();
    // PostgreSQL: only its own (the other may be a live instance). PGlite is single-process: every claim is stale.
    const expected = onPostgres ? [mine.id] : [mine.id, theirs.id].sort();
    await eventually(() => hits('/stale').length === expected.length, 3_000);
    await sleep(200);
    expect(
      hits('/stale')
        .map((r) => r.json.id)
        .sort(),
    ).toEqual(expected);
  });

  it('starts delivering when its stale claims cannot be freed, and leaves those to their leases', async () => {
    const t = await createTestApp({
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_POLL_MS: '200',
      INSTANCE_ID: 'api-unreleased',
    });
    apps.push(t);
    const acme = await t.tenant('Unreleased');
    const { subscriptionId } = await subscribe(t, acme, `${receiver.origin}/unreleased`);
    await emitTools(t, acme.orgId, 2, 'unreleased');
    const [claimed, free] = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId } });
    await t.db.prisma.webhookDelivery.updateMany({
      where: { id: claimed.id },
      data: { claimedBy: 'api-unreleased', leaseUntil: new Date(Date.now() + 1_500) },
    });
    // The release fails, as it would with the database away for a moment; claims and outcomes are untouched (an
    // outcome always counts an attempt, a release never does).
    await t.db.sql.exec(`
      CREATE FUNCTION refuse_release() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'release refused'; END $$;
      CREATE TRIGGER refuse_release BEFORE UPDATE ON webhook_deliveries FOR EACH ROW
      WHEN (OLD."claimedBy" IS NOT NULL AND NEW."claimedBy" IS NULL AND NEW.attempts = OLD.attempts)
      EXECUTE FUNCTION refuse_release();`);
    try {
      await t.deps.delivery.start();
      expect(t.logs.some((l) => String(l.msg).startsWith('could not release webhook claims'))).toBe(true);
      // The unclaimed one goes out at once; the claimed one when its lease has run out.
      await eventually(() => hits('/unreleased').length === 1, 3_000);
      expect(hits('/unreleased')[0].json.id).toBe(free.id);
      await eventually(() => hits('/unreleased').length === 2, 5_000);
      expect(hits('/unreleased')[1].json.id).toBe(claimed.id);
    } finally {
      await t.db.sql.exec('DROP TRIGGER refuse_release ON webhook_deliveries; DROP FUNCTION refuse_release();');
    }
  });

  it('closes after a start still freeing claims has finished, and that start then starts nothing', async () => {
    const t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_POLL_MS: '100' });
    apps.push(t);
    const acme = await t.tenant('Closing');
    await subscribe(t, acme, `${receiver.origin}/closing`);
    // The release (the first update of the queue from here on) takes a while: the server starts delivering after
    // it answers, so a shutdown can come first.
    await t.db.sql.exec(`
      CREATE TABLE slow_once (x int); INSERT INTO slow_once VALUES (1);
      CREATE FUNCTION slow_release() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM slow_once) THEN DELETE FROM slow_once; PERFORM pg_sleep(0.5); END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER slow_release BEFORE UPDATE ON webhook_deliveries FOR EACH STATEMENT
      EXECUTE FUNCTION slow_release();`);
    const starting = t.deps.delivery.start();
    await sleep(50);
    const closing = t.deps.delivery.close();
    let started = false;
    void starting.then(() => (started = true));
    await closing;
    expect(started).toBe(true);
    // Closed: no poll runs, so an event committed now stays queued.
    await emitTools(t, acme.orgId, 1, 'closing');
    await sleep(400);
    expect(hits('/closing')).toHaveLength(0);
  });
});
