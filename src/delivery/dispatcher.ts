import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { firstChars, type SendResult, type WebhookSender } from './sender.ts';
import { signEnvelope } from './signer.ts';

/** Sends in flight at once per tick, overall and towards one receiver (host:port). */
export const PARALLEL_SENDS = 16;
export const PARALLEL_PER_RECEIVER = 4;
const LEASE_MARGIN_MS = 60_000;

interface ClaimedDelivery {
  id: string;
  orgId: string;
  eventType: string;
  attempts: number;
  leaseUntil: Date;
  url: string;
  secret: string;
  data: unknown;
}

export interface DispatchSummary {
  claimed: number;
  delivered: number;
  failed: number;
  abandoned: number;
}

export type Outcome = 'DELIVERED' | 'FAILED' | 'ABANDONED';

/**
 * Delivers due webhook rows. One tick: claim up to `batchSize` due rows (PENDING or FAILED, next attempt
 * reached, no live lease, subscription active) with FOR UPDATE SKIP LOCKED in one short statement that also
 * stamps a lease, so concurrent dispatchers in other processes never claim the same row; send outside any
 * transaction, receivers in parallel; record each outcome as soon as it is known, guarded by the lease so a
 * late writer cannot overwrite a newer claim. A claimer that dies leaves its rows to be re-claimed when the
 * lease runs out: delivery is at least once, and the envelope id lets receivers drop repeats.
 *
 * Attempts: one initial attempt plus one retry per entry of the retry schedule (default 30 s, 2 min, 8 min,
 * 30 min, 2 h, 8 h: 7 attempts in all); when the attempt after the last delay fails, the row is ABANDONED.
 */
export function createWebhookDispatcher({ db, config, log, sender, onOutcome }: {
  db: Database;
  config: Config;
  log: FastifyBaseLogger;
  sender: WebhookSender;
  /** Told every recorded outcome (metrics). */
  onOutcome?: (outcome: Outcome) => void;
}) {
  const { batchSize, timeoutMs, retryScheduleSec } = config.webhooks;
  // Long enough for the worst tick: every claimed row going to one slow receiver, PARALLEL_PER_RECEIVER at a time.
  const leaseSec = (Math.ceil(batchSize / PARALLEL_PER_RECEIVER) * (timeoutMs + 1_000) + LEASE_MARGIN_MS) / 1000;

  function claim(): Promise<ClaimedDelivery[]> {
    return db.prisma.$queryRaw<ClaimedDelivery[]>`
      WITH due AS (
        SELECT d.id
        FROM webhook_deliveries d
        JOIN webhook_subscriptions s ON s.id = d."subscriptionId" AND s.active
        WHERE d.status IN ('PENDING', 'FAILED')
          AND d."nextAttemptAt" <= now()
          AND (d."leaseUntil" IS NULL OR d."leaseUntil" < now())
        ORDER BY d."nextAttemptAt", d.id
        LIMIT ${batchSize}
        FOR UPDATE OF d SKIP LOCKED
      )
      UPDATE webhook_deliveries d
      SET "leaseUntil" = now() + make_interval(secs => ${leaseSec}::double precision)
      FROM due, webhook_subscriptions s, events e
      WHERE d.id = due.id AND s.id = d."subscriptionId" AND e.id = d."eventId"
      RETURNING d.id, d."orgId", d."eventType", d.attempts, d."leaseUntil", s.url, s.secret, e.data`;
  }

  async function record(row: ClaimedDelivery, result: SendResult, attemptAt: Date): Promise<Outcome | null> {
    const attempts = row.attempts + 1;
    const retryInSec = retryScheduleSec[attempts - 1];
    const outcome: Outcome = result.ok ? 'DELIVERED' : retryInSec === undefined ? 'ABANDONED' : 'FAILED';
    const nextAttemptAt = outcome === 'FAILED' ? Prisma.sql`now() + make_interval(secs => ${retryInSec}::double precision)` : Prisma.sql`NULL`;
    const updated = await db.prisma.$executeRaw`
      UPDATE webhook_deliveries SET
        status = ${outcome}::"DeliveryStatus",
        attempts = ${attempts},
        "lastAttemptAt" = ${attemptAt},
        "deliveredAt" = ${result.ok ? attemptAt : null},
        "nextAttemptAt" = ${nextAttemptAt},
        "leaseUntil" = NULL,
        "responseStatus" = ${result.status},
        "responseBody" = ${firstChars(result.bodyPrefix)},
        error = ${result.error}
      WHERE id = ${row.id} AND "leaseUntil" = ${row.leaseUntil}`;
    if (updated === 0) {
      // The subscription was deleted meanwhile, or the lease ran out and another dispatcher owns the row now.
      log.warn({ deliveryId: row.id, outcome }, 'webhook delivery outcome not recorded: row deleted or lease lost');
      return null;
    }
    return outcome;
  }

  async function deliver(row: ClaimedDelivery): Promise<Outcome | null> {
    const signed = signEnvelope(row.secret, { id: row.id, event: row.eventType, organizationId: row.orgId, data: row.data });
    const result = await sender.send(row.url, signed.body, signed.headers);
    try {
      const outcome = await record(row, result, signed.sentAt);
      if (outcome) onOutcome?.(outcome);
      if (outcome === 'FAILED' || outcome === 'ABANDONED') {
        log[outcome === 'ABANDONED' ? 'warn' : 'info'](
          { deliveryId: row.id, orgId: row.orgId, event: row.eventType, attempt: row.attempts + 1, status: result.status, error: result.error },
          outcome === 'ABANDONED' ? 'webhook delivery abandoned' : 'webhook delivery failed; will retry',
        );
      }
      return outcome;
    } catch (err) {
      // The row keeps its lease and is retried once the lease runs out.
      log.error({ err, deliveryId: row.id }, 'could not record webhook delivery outcome');
      return null;
    }
  }

  return {
    leaseSec,

    /** One dispatcher tick; resolves when every claimed row has been sent and recorded. */
    async dispatchOnce(): Promise<DispatchSummary> {
      const rows = await claim();
      const summary: DispatchSummary = { claimed: rows.length, delivered: 0, failed: 0, abandoned: 0 };
      await runBounded(rows, receiverOf, async (row) => {
        const outcome = await deliver(row).catch((err: unknown) => {
          log.error({ err, deliveryId: row.id }, 'webhook delivery crashed; retried when its lease runs out');
          return null;
        });
        if (outcome === 'DELIVERED') summary.delivered++;
        else if (outcome === 'FAILED') summary.failed++;
        else if (outcome === 'ABANDONED') summary.abandoned++;
      });
      return summary;
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;

function receiverOf(row: ClaimedDelivery): string {
  try {
    return new URL(row.url).host;
  } catch {
    return row.url;
  }
}

/**
 * Runs `work` for every item, at most PARALLEL_SENDS at once and at most PARALLEL_PER_RECEIVER per key, so a
 * slow receiver occupies only its own slots while the others keep going. `work` must not reject.
 */
function runBounded<T>(items: T[], keyOf: (item: T) => string, work: (item: T) => Promise<void>): Promise<void> {
  const queues = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const queue = queues.get(key);
    if (queue) queue.push(item);
    else queues.set(key, [item]);
  }
  const inFlight = new Map<string, number>();
  let active = 0;
  return new Promise((resolve) => {
    const pump = () => {
      for (const [key, queue] of queues) {
        while (queue.length > 0 && active < PARALLEL_SENDS && (inFlight.get(key) ?? 0) < PARALLEL_PER_RECEIVER) {
          const item = queue.shift()!;
          active++;
          inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
          void work(item).finally(() => {
            active--;
            inFlight.set(key, inFlight.get(key)! - 1);
            pump();
          });
        }
        if (queue.length === 0) queues.delete(key);
      }
      if (active === 0 && queues.size === 0) resolve();
    };
    pump();
  });
}
