import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Database } from '../db/database.ts';
import { createBreakers } from './breaker.ts';
import { createClaims } from './claims.ts';
import { createDispatcher, type AttemptOutcome } from './dispatcher.ts';
import { keyringFromConfig } from '../core/secret-keys.ts';
import { createSecretBox, SecretUnavailableError, type SecretBox } from '../security/secret-box.ts';
import { createWebhookSender } from './sender.ts';
import { startWakeup, type Wakeup } from './wakeup.ts';

/**
 * The outbound webhook machinery of one process, built once in the composition root: sender (keep-alive
 * pools), breakers, dispatcher, wake-up and the timers that drive them.
 *
 * continuous (default): committed events wake the dispatcher at once (in process, and through
 * LISTEN/NOTIFY across instances on PostgreSQL with DATABASE_DIRECT_URL; without it the other instances find
 * them at their next poll, WEBHOOK_POLL_MS); it claims while it has free slots and due rows, refilling
 * a slot the moment a send ends. The cron tick, a short poll and timers for scheduled retries and
 * cooling breakers sweep up everything else (due retries, leases of crashed instances).
 * tick: only the cron tick dispatches, up to WEBHOOK_BATCH_SIZE rows per tick (the specification's model).
 */
export function createDelivery({
  config,
  db,
  log,
  clock = systemClock,
  onOutcome,
  secrets: box,
}: {
  config: Config;
  db: Database;
  /** Opens the subscriptions' signing secrets (default: a box over the configured keys). */
  secrets?: SecretBox;
  log: FastifyBaseLogger;
  clock?: Clock;
  onOutcome?: (outcome: AttemptOutcome) => void;
}) {
  const settings = config.webhooks;
  const secrets = box ?? createSecretBox(keyringFromConfig(config.secretsEncryptionKeys, db.kind));
  const sender = createWebhookSender({
    timeoutMs: settings.timeoutMs,
    allowPrivateNetworks: settings.allowPrivateNetworks,
    caFile: settings.caFile,
  });
  const claims = createClaims(db, config.instanceId, settings.leaseSec);
  // The probe cadence follows the schedule: a receiver that recovers is noticed within the shortest retry delay.
  const breakers = createBreakers({
    failures: settings.breaker.failures,
    cooldownMs: Math.min(settings.breaker.cooldownMs, Math.min(...settings.retryScheduleSec) * 1000),
  });
  const dispatcher = createDispatcher({
    config,
    log,
    sender,
    claims,
    breakers,
    clock,
    onOutcome,
    signingSecrets: (row, now) => {
      try {
        return { keys: secrets.liveSecrets(row.subscriptionId, row, now) };
      } catch (err) {
        if (err instanceof SecretUnavailableError) return { error: `not sent: ${err.message}` };
        throw err;
      }
    },
  });
  const continuous = settings.dispatchMode === 'continuous';

  let started = false;
  /** start() under way or done: close() waits for it, so its statement never outlives the pools. */
  let starting: Promise<void> | null = null;
  let closed: Promise<void> | null = null;
  let wakeup: Wakeup | null = null;
  const timers: NodeJS.Timeout[] = [];
  let nextWake: { at: number; timer: NodeJS.Timeout } | null = null;

  // The claim loop: one claim at a time; wakes arriving meanwhile coalesce into one more pass.
  let pumping = false;
  let wanted = false;
  /** The last claim was cut short by its limit: a freed slot probably has more waiting. */
  let backlog = false;
  async function pump(): Promise<void> {
    if (!started || closed) return;
    if (pumping) {
      wanted = true;
      return;
    }
    pumping = true;
    try {
      do {
        wanted = false;
        while (dispatcher.freeSlots > 0) {
          const limit = Math.min(settings.batchSize, dispatcher.freeSlots);
          const claimed = await dispatcher.fill(limit);
          backlog = claimed === limit;
          if (claimed < limit) break;
        }
        await dispatcher.skipUnsent();
      } while (wanted && !closed);
    } catch (err) {
      log.error({ err }, 'webhook claim failed; retried on the next wake-up or poll');
    } finally {
      pumping = false;
    }
    scheduleBreakerWake();
  }
  const wake = () => void pump();

  /** One timer for the earliest moment something becomes due in this process (a retry, a breaker cooling). */
  function wakeIn(ms: number) {
    const at = Date.now() + ms;
    if (nextWake && nextWake.at <= at) return;
    if (nextWake) clearTimeout(nextWake.timer);
    const timer = setTimeout(() => {
      nextWake = null;
      wake();
    }, ms);
    timer.unref();
    nextWake = { at, timer };
  }
  function scheduleBreakerWake() {
    const ms = breakers.nextReopenInMs();
    if (ms !== null) wakeIn(ms + 10);
  }

  if (continuous) {
    // Refill in batches: one claim per freed slot would cost a round trip per delivery under load.
    const refillAt = Math.max(1, Math.floor(settings.concurrency / 8));
    dispatcher.hooks.onSlotFreed = (moreDue) => {
      if ((backlog || moreDue) && (dispatcher.freeSlots >= refillAt || dispatcher.inFlight === 0)) wake();
    };
    dispatcher.hooks.onRetryScheduled = (sec) => wakeIn(sec * 1000 + 10);
    dispatcher.hooks.onBreakerOpen = wake;
  }

  return {
    /** The sender, for the subscription service's test endpoint. */
    sender,
    dispatcher,
    breakers,
    instanceId: config.instanceId,

    start,
    tick,
    close,
  };

  /**
   * Frees this instance's claims left by a crash, then (continuous mode) starts waking and polling. Never fails:
   * claims that cannot be freed now are freed by their leases running out (WEBHOOK_LEASE_SEC), so the server can
   * start delivering without waiting for them, and can call this after it starts answering.
   */
  function start(): Promise<void> {
    if (!starting && !closed) starting = begin();
    return starting ?? Promise.resolve();
  }
  async function begin(): Promise<void> {
    const freed = await claims.releaseStale().catch((err: unknown) => {
      log.warn({ err }, 'could not release webhook claims left before a restart; their leases free them');
      return 0;
    });
    if (freed)
      log.info(
        { freed, instanceId: config.instanceId },
        'released webhook claims left by this instance before a restart',
      );
    // Closed while the claims were being freed (a shutdown during start-up): nothing more to start.
    if (closed) return;
    // Only now may the claim loop run: a claim made while the release ran could be released by it (same instance
    // id) and sent twice. Nothing can wake it before this line (the wake-ups and the poll start below, tick()
    // awaits start()): the flag is a second guard. Events committed meanwhile are found by the wake() below
    // (continuous mode) or the next tick.
    started = true;
    const renew = setInterval(
      () => {
        dispatcher.renewLeases().catch((err: unknown) => log.warn({ err }, 'could not renew webhook leases'));
      },
      (settings.leaseSec * 1000) / 3,
    );
    renew.unref();
    timers.push(renew);
    if (!continuous) return;
    // LISTEN needs a session: only on the direct connection, never through a transaction pooler.
    wakeup = startWakeup({ listenUrl: db.kind === 'postgresql' ? config.databaseDirectUrl : undefined, log, wake });
    const poll = setInterval(wake, settings.pollMs);
    poll.unref();
    timers.push(poll);
    wake();
  }

  /** The scheduler tick: in continuous mode a sweep (wake-up); in tick mode one bounded dispatch. */
  async function tick(): Promise<unknown> {
    if (!continuous) return dispatcher.dispatchOnce();
    await start();
    return pump();
  }

  /** Stops claiming, aborts sends in progress and releases their claims, closes the connection pools. */
  function close(): Promise<void> {
    closed ??= (async () => {
      await starting; // starts nothing more once closed (see begin)
      for (const t of timers) clearInterval(t);
      if (nextWake) clearTimeout(nextWake.timer);
      await wakeup?.close();
      await dispatcher.stop();
      await sender.close();
    })();
    return closed;
  }
}

export type Delivery = ReturnType<typeof createDelivery>;
