import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Breakers } from './breaker.ts';
import type { ClaimedDelivery, Claims } from './claims.ts';
import { createOutcomeWriter } from './outcome-writer.ts';
import { firstChars, type SendResult, type WebhookSender } from './sender.ts';
import type { Clock } from '../core/clock.ts';
import { signEnvelope } from './signer.ts';
import { createUnsentRecorder } from './unsent.ts';

export type Outcome = 'DELIVERED' | 'FAILED' | 'ABANDONED';
/**
 * What the metrics count: every attempt's outcome; an attempt not sent (open breaker) that is not the last one
 * is SKIPPED_CIRCUIT_OPEN.
 */
export type AttemptOutcome = Outcome | 'SKIPPED_CIRCUIT_OPEN';

/**
 * A busy subscription may have up to this many times its share claimed (the rest wait in memory, leased, and
 * go out the moment one of its sends ends), refilled before they run out, so a claim's round trip overlaps its
 * sends instead of draining them: a receiver answering within a millisecond empties a share of 8 as fast as a
 * claim comes back. Waiting rows count against WEBHOOK_CONCURRENCY only up to the subscription's share (see
 * freeSlots): they can only ever take that subscription's own slots, so they never keep another one waiting.
 */
const PREFETCH = 8;

export interface DispatchSummary {
  claimed: number;
  delivered: number;
  failed: number;
  abandoned: number;
  /** Attempts recorded without a send because the subscription's breaker is open (included in failed/abandoned). */
  skipped: number;
}

/**
 * A pool of senders fed from the queue. Claims (claims.ts) take at most `concurrency` rows in flight per
 * process and at most `subscriptionConcurrency` per subscription, visiting subscriptions round-robin, so a
 * hanging receiver holds only its own share and never delays another subscription. Each send runs on its
 * own; its slot is refilled as soon as it ends. Leases are short and renewed while sends run. Outcomes are
 * written in batches. An open breaker makes a due attempt cheaper, never later: its rows are failed unsent
 * (skipUnsent) at their scheduled time, in one statement, outside the subscription's share of the senders.
 *
 * Attempts: one initial attempt plus one retry per entry of the retry schedule (default 30 s, 2 min, 8 min,
 * 30 min, 2 h, 8 h: 7 attempts in all); when the attempt after the last delay fails, the row is ABANDONED.
 */
export function createDispatcher({
  config,
  log,
  sender,
  claims,
  breakers,
  clock,
  onOutcome,
  signingSecrets,
}: {
  config: Config;
  /** The secrets that sign this row now, or why it cannot be signed (src/security/secret-box.ts). */
  signingSecrets: (row: ClaimedDelivery, now: Date) => { keys: string[] } | { error: string };
  /** Signing time and the rotation overlap of secrets. */
  clock: Clock;
  log: FastifyBaseLogger;
  sender: WebhookSender;
  claims: Claims;
  breakers: Breakers;
  /** Told every recorded outcome (metrics). */
  onOutcome?: (outcome: AttemptOutcome) => void;
}) {
  const { batchSize, concurrency, subscriptionConcurrency, retryScheduleSec, leaseSec } = config.webhooks;
  const writer = createOutcomeWriter(claims, log);
  /** Rows being sent, by id. */
  const inFlight = new Map<string, ClaimedDelivery>();
  // One signal for every send: only shutdown aborts a send, and it aborts them all. Each send listens to it
  // while it runs, up to WEBHOOK_CONCURRENCY listeners at once: no listener limit to warn about.
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal);
  const perSubscription = new Map<string, number>();
  const running = new Set<Promise<Outcome | null>>();
  const saturated = new Set<string>();
  /** Claimed rows waiting for a slot of their subscription's share (continuous mode). */
  const queued = new Map<string, ClaimedDelivery[]>();
  let cursor = '';
  let stopped = false;
  const queuedOf = (id: string) => queued.get(id)?.length ?? 0;

  async function claimNext(limit: number, prefetch = 1): Promise<ClaimedDelivery[]> {
    const { blocked, probeOnly } = breakers.restrictions();
    const share = subscriptionConcurrency * prefetch;
    const caps = new Map<string, number>();
    for (const [id, n] of perSubscription) caps.set(id, Math.max(0, share - n - queuedOf(id)));
    for (const id of queued.keys()) if (!caps.has(id)) caps.set(id, Math.max(0, share - queuedOf(id)));
    for (const id of probeOnly) caps.set(id, Math.min(1, caps.get(id) ?? 1));
    const rows = await claims.claim({ limit, perSubscription: share, caps, blocked, after: cursor });
    // A subscription that used up its share may have more due rows: its next freed slot must look again.
    const got = new Map<string, number>();
    for (const r of rows) got.set(r.subscriptionId, (got.get(r.subscriptionId) ?? 0) + 1);
    for (const [id, n] of caps) if (n === 0) saturated.add(id);
    for (const [id, n] of got) {
      if (n >= (caps.get(id) ?? share)) saturated.add(id);
      else saturated.delete(id);
    }
    if (rows.length < limit) for (const [id, n] of caps) if (n > 0 && !got.has(id)) saturated.delete(id);
    if (rows.length > 0) {
      const ids = [...new Set(rows.map((r) => r.subscriptionId))].sort();
      cursor = ids.find((id) => id > cursor) ?? ids.at(-1)!;
    }
    return rows;
  }

  function outcomeOf(row: ClaimedDelivery, result: SendResult): { outcome: Outcome; retryInSec: number | null } {
    const retryInSec = retryScheduleSec[row.attempts];
    if (result.ok) return { outcome: 'DELIVERED', retryInSec: null };
    return retryInSec === undefined ? { outcome: 'ABANDONED', retryInSec: null } : { outcome: 'FAILED', retryInSec };
  }

  async function deliver(row: ClaimedDelivery, sent: () => void): Promise<Outcome | null> {
    const now = clock.now();
    const secrets = signingSecrets(row, now);
    // A row that cannot be signed (its secret's key is missing) is not sent: the attempt is recorded with the
    // reason and retried on the schedule, and the receiver's breaker is left out of it.
    const signed =
      'keys' in secrets
        ? signEnvelope(
            secrets.keys,
            { id: row.id, eventId: row.eventId, event: row.eventType, organizationId: row.orgId, data: row.data },
            { now },
          )
        : null;
    if (signed) breakers.started(row.subscriptionId);
    const result: SendResult = signed
      ? await sender.send(row.url, signed.body, signed.headers, shutdown.signal)
      : { ok: false, status: null, bodyPrefix: null, error: (secrets as { error: string }).error, durationMs: 0 };
    if (!result.aborted) sent(); // the slot is free while the outcome waits for its batched write
    if (result.aborted) {
      breakers.released(row.subscriptionId);
      return null;
    }
    if (signed && breakers.record(row.subscriptionId, result.ok, result.error) === 'open') {
      await releaseQueued(row.subscriptionId);
      hooks.onBreakerOpen();
    }
    const { outcome, retryInSec } = outcomeOf(row, result);
    if (outcome === 'FAILED') hooks.onRetryScheduled(retryInSec!);
    const written = await writer.record({
      id: row.id,
      status: outcome,
      attempts: row.attempts + 1,
      attemptAt: signed?.sentAt ?? now,
      retryInSec,
      responseStatus: result.status,
      responseBody: firstChars(result.bodyPrefix),
      error: result.error,
    });
    if (!written) {
      log.warn({ deliveryId: row.id, outcome }, 'webhook delivery outcome not recorded: row deleted or claim lost');
      return null;
    }
    onOutcome?.(outcome);
    if (outcome !== 'DELIVERED') {
      log[outcome === 'ABANDONED' ? 'warn' : 'info'](
        {
          deliveryId: row.id,
          orgId: row.orgId,
          event: row.eventType,
          attempt: row.attempts + 1,
          status: result.status,
          error: result.error,
        },
        outcome === 'ABANDONED' ? 'webhook delivery abandoned' : 'webhook delivery failed; will retry',
      );
    }
    return outcome;
  }

  /** Gives back a subscription's waiting rows (its breaker opened: they are recorded unsent instead). */
  async function releaseQueued(subscriptionId: string): Promise<void> {
    const rows = queued.get(subscriptionId);
    if (!rows) return;
    queued.delete(subscriptionId);
    await claims.release(rows.map((r) => r.id)).catch((err: unknown) => {
      log.warn({ err }, 'could not release webhook claims; they are attempted when their lease runs out');
    });
  }

  /** Sends a claimed row now if its subscription has a free slot in its share, else keeps it waiting. */
  function admit(row: ClaimedDelivery): void {
    if ((perSubscription.get(row.subscriptionId) ?? 0) < subscriptionConcurrency) {
      void launch(row);
      return;
    }
    const rows = queued.get(row.subscriptionId) ?? [];
    rows.push(row);
    queued.set(row.subscriptionId, rows);
  }

  /** A slot of the subscription is free: its next waiting row goes out without a round trip. */
  function next(subscriptionId: string): void {
    const rows = queued.get(subscriptionId);
    if (!rows || stopped) return;
    // Its breaker opened while they were being claimed: they are recorded unsent instead.
    if (breakers.stateOf(subscriptionId) !== 'closed')
      return void releaseQueued(subscriptionId).then(hooks.onBreakerOpen);
    const row = rows.shift()!;
    if (rows.length === 0) queued.delete(subscriptionId);
    void launch(row);
  }

  /** Starts one send; its slot is free again as soon as the receiver has answered (or not). */
  function launch(row: ClaimedDelivery): Promise<Outcome | null> {
    inFlight.set(row.id, row);
    perSubscription.set(row.subscriptionId, (perSubscription.get(row.subscriptionId) ?? 0) + 1);
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      inFlight.delete(row.id);
      const left = perSubscription.get(row.subscriptionId)! - 1;
      if (left > 0) perSubscription.set(row.subscriptionId, left);
      else perSubscription.delete(row.subscriptionId);
      next(row.subscriptionId);
      // Refill a busy subscription once half its prefetch is free: a claim then brings half of it at once, and
      // the rows still waiting keep its share busy for that claim's round trip.
      hooks.onSlotFreed(
        saturated.has(row.subscriptionId) &&
          queuedOf(row.subscriptionId) <= subscriptionConcurrency * (PREFETCH / 2 - 1),
      );
    };
    const task = deliver(row, free)
      .catch((err: unknown) => {
        log.error({ err, deliveryId: row.id }, 'webhook delivery crashed; retried when its lease runs out');
        return null;
      })
      .finally(() => {
        free();
        running.delete(task);
      });
    running.add(task);
    return task;
  }

  /** Hooks for the continuous loop (delivery.ts); no-ops for a dispatcher driven by ticks alone. */
  const hooks = {
    onSlotFreed: (_moreDue: boolean) => {},
    onRetryScheduled: (_sec: number) => {},
    /** A breaker is open: its due rows are to be failed unsent now. */
    onBreakerOpen: () => {},
  };

  const unsent = createUnsentRecorder({
    claims,
    breakers,
    log,
    retryScheduleSec,
    onOutcome,
    onRetryScheduled: (sec) => hooks.onRetryScheduled(sec),
  });
  const skipUnsent = () => (stopped ? Promise.resolve({ failed: 0, abandoned: 0 }) : unsent.record());

  return {
    hooks,
    get inFlight() {
      return inFlight.size;
    },
    /**
     * Capacity left for claiming. A subscription uses at most its share of it, whether its rows are being sent or
     * waiting: its waiting rows can only ever take its own slots, so they never keep another subscription's rows
     * from being claimed and sent.
     */
    get freeSlots() {
      if (stopped) return 0;
      let used = 0;
      for (const [id, n] of perSubscription) used += Math.min(subscriptionConcurrency, n + queuedOf(id));
      for (const [id, rows] of queued)
        if (!perSubscription.has(id)) used += Math.min(subscriptionConcurrency, rows.length);
      return concurrency - used;
    },
    leaseSec,
    skipUnsent,

    /** Claims up to `limit` due rows and starts sending them; resolves once they are claimed. */
    async fill(limit: number): Promise<number> {
      if (stopped || limit <= 0) return 0;
      const rows = await claimNext(limit, PREFETCH);
      if (stopped) {
        await claims.release(rows.map((r) => r.id));
        return 0;
      }
      for (const row of rows) admit(row);
      return rows.length;
    },

    /**
     * One tick of the specification's model: claims up to WEBHOOK_BATCH_SIZE due rows and resolves when every
     * one has been sent and recorded.
     */
    async dispatchOnce(): Promise<DispatchSummary> {
      if (stopped) return { claimed: 0, delivered: 0, failed: 0, abandoned: 0, skipped: 0 };
      const skipped = await skipUnsent();
      const rows = await claimNext(Math.min(batchSize, Math.max(concurrency - inFlight.size, 0)));
      const outcomes = await Promise.all(rows.map(launch));
      await writer.flush();
      // Rows that became due behind a breaker that opened during this tick are not left for the next one.
      const late = await skipUnsent();
      const count = (o: Outcome) => outcomes.filter((x) => x === o).length;
      return {
        claimed: rows.length,
        delivered: count('DELIVERED'),
        failed: count('FAILED') + skipped.failed + late.failed,
        abandoned: count('ABANDONED') + skipped.abandoned + late.abandoned,
        skipped: skipped.failed + skipped.abandoned + late.failed + late.abandoned,
      };
    },

    /** Extends the leases of the rows being sent (and those whose outcome is not yet written). */
    renewLeases: () => claims.renew([...inFlight.keys(), ...[...queued.values()].flat().map((r) => r.id)]),

    /** Aborts sends in progress, writes the outcomes already known and gives the aborted rows back. */
    async stop(): Promise<void> {
      stopped = true;
      const aborted = [...inFlight.keys(), ...[...queued.values()].flat().map((r) => r.id)];
      queued.clear();
      shutdown.abort();
      await Promise.allSettled([...running]);
      await writer.flush();
      const released = await claims.release(aborted).catch((err: unknown) => {
        log.error({ err }, 'could not release webhook claims; they are re-sent when their lease runs out');
        return 0;
      });
      if (aborted.length)
        log.info({ aborted: aborted.length, released }, 'webhook sends aborted for shutdown; claims released');
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
