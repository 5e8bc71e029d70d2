import type { Database } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';

export interface ClaimedDelivery {
  id: string;
  orgId: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  attempts: number;
  url: string;
  /** The subscription's stored secrets (src/security/secret-box.ts opens them). */
  secret: string | null;
  secretCiphertext: string | null;
  previousSecret: string | null;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
  data: unknown;
}

export interface ClaimRequest {
  limit: number;
  /** Rows per subscription unless `caps` says otherwise (its share of the senders). */
  perSubscription: number;
  /** Remaining share of subscriptions with sends in flight or a half-open breaker (0 = none now). */
  caps: Map<string, number>;
  /** Subscriptions whose rows stay put (open breaker). */
  blocked: string[];
  /** Round-robin start: subscriptions after this id are served first. */
  after: string;
}

export interface RecordedOutcome {
  id: string;
  status: 'DELIVERED' | 'FAILED' | 'ABANDONED';
  attempts: number;
  attemptAt: Date;
  retryInSec: number | null;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

/**
 * A subscription's due rows, oldest first: the claim's and skipUnsent's reading of the queue. Its conditions are
 * the predicate of webhook_deliveries_queue_idx (migration 20261127100000) and its order the index's, so the index
 * answers it, read in order, whatever the statistics; change them together. `subscription` is a column reference.
 * The row's partition key comes along, so the statement that follows reads the row's own partition.
 */
const dueRowsOf = (subscription: string) => `
      SELECT d.id, d."createdAt" FROM webhook_deliveries d
      WHERE d."subscriptionId" = ${subscription}
        AND d."nextAttemptAt" <= now()
        AND d.status IN ('PENDING', 'FAILED')
        AND (d."leaseUntil" IS NULL OR d."leaseUntil" < now())
      ORDER BY d."nextAttemptAt"`;

/**
 * The two statements of every delivery, on the driver below Prisma (its driver-adapter path adds CPU to every
 * query) and prepared once per connection where that is safe: the claim is on a busy subscription's critical
 * path, since its senders drain while it runs.
 * Claim parameters: $1 round-robin start, $2 caps (json), $3 rows per subscription, $4 blocked (json), $5 limit,
 * $6 lease seconds, $7 instance id.
 */
const CLAIM_SQL = `
  WITH subs AS (
    (SELECT s.id FROM webhook_subscriptions s WHERE s.active AND s.id > $1::text ORDER BY s.id)
    UNION ALL
    (SELECT s.id FROM webhook_subscriptions s WHERE s.active AND s.id <= $1::text ORDER BY s.id)
  ), picked AS (
    SELECT due.id, due."createdAt", subs.id AS sid
    FROM subs
    LEFT JOIN json_to_recordset($2::json) AS cap(id text, n int) ON cap.id = subs.id
    CROSS JOIN LATERAL (${dueRowsOf('subs.id')}
      LIMIT COALESCE(cap.n, $3::int)
      FOR UPDATE OF d SKIP LOCKED
    ) due
    WHERE subs.id NOT IN (SELECT json_array_elements_text($4::json))
    LIMIT $5::int
  )
  UPDATE webhook_deliveries d
  SET "leaseUntil" = now() + make_interval(secs => $6::double precision), "claimedBy" = $7::text
  FROM picked, webhook_subscriptions s, events e
  WHERE d.id = picked.id AND d."createdAt" = picked."createdAt" AND s.id = picked.sid AND e.id = d."eventId"
  RETURNING d.id, d."orgId", d."subscriptionId", d."eventId", d."eventType", d.attempts, s.url, s.secret,
    s."secretCiphertext", s."previousSecret", s."previousSecretCiphertext", s."previousSecretExpiresAt", e.data`;

/** Outcomes: $1 the rows (json), $2 the instance id (see record()). */
const RECORD_SQL = `
  WITH written AS (
    UPDATE webhook_deliveries d SET
      status = u.status::"DeliveryStatus",
      attempts = u.attempts,
      "lastAttemptAt" = u.at,
      "deliveredAt" = CASE WHEN u.status = 'DELIVERED' THEN u.at END,
      "nextAttemptAt" = CASE WHEN u.retry IS NULL THEN NULL ELSE now() + make_interval(secs => u.retry) END,
      "leaseUntil" = NULL,
      "claimedBy" = NULL,
      "responseStatus" = u.rs,
      "responseBody" = u.body,
      error = u.err
    FROM json_to_recordset($1::json) AS u(id text, status text, attempts int, at timestamptz, retry float8, rs int, body text, err text)
    WHERE d.id = u.id AND d."claimedBy" = $2::text AND d.attempts = u.attempts - 1
    RETURNING d.id, d."orgId", d."subscriptionId" AS sid, u.status = 'DELIVERED' AS ok, u.at
  ), batch AS (
    SELECT sid, max(at) FILTER (WHERE ok) AS ok_at, max(at) FILTER (WHERE NOT ok) AS fail_at FROM written GROUP BY sid
  ), health AS (
    SELECT b.*, (SELECT min(w.at) FROM written w
                 WHERE w.sid = b.sid AND NOT w.ok AND (b.ok_at IS NULL OR w.at > b.ok_at)) AS fail_from
    FROM batch b
  ), locked AS MATERIALIZED (
    -- Only rows whose health changes: a streak starts or ends, or lastFailureAt moves by a minute or more
    -- (a failing receiver must not cost a subscription-row write per batch).
    SELECT s.id FROM webhook_subscriptions s JOIN health h ON h.sid = s.id
    WHERE (h.ok_at IS NOT NULL AND s."failingSince" IS DISTINCT FROM h.fail_from)
       OR (h.ok_at IS NULL AND s."failingSince" IS NULL AND h.fail_from IS NOT NULL)
       OR h.fail_at >= COALESCE(s."lastFailureAt", '-infinity') + interval '1 minute'
    ORDER BY s.id FOR UPDATE OF s
  ), healed AS (
    -- A data-modifying CTE runs to completion whether or not the final SELECT reads it.
    UPDATE webhook_subscriptions s SET
      "failingSince" = CASE WHEN h.ok_at IS NOT NULL THEN h.fail_from ELSE COALESCE(s."failingSince", h.fail_from) END,
      "lastFailureAt" = GREATEST(s."lastFailureAt", h.fail_at)
    FROM health h, locked l
    WHERE s.id = h.sid AND l.id = s.id
    RETURNING s.id
  )
  SELECT id, "orgId" FROM written`;

/** The delivery queue's SQL, every statement guarded by the claimant's instance id. */
export function createClaims(db: Database, instanceId: string, leaseSec: number) {
  const lease = Prisma.sql`now() + make_interval(secs => ${leaseSec}::double precision)`;
  const json = (value: unknown) => JSON.stringify(value);
  // A failure to record is not the delivery's: the read after it is served by the primary or a replica in step.
  const noteWrites = (orgIds: string[]) => db.replicas?.noteWrites(orgIds).catch(() => {});

  return {
    /**
     * Claims due rows with FOR UPDATE SKIP LOCKED (two instances never claim the same row) in one statement
     * that stamps a short lease. Subscriptions are visited round-robin from `after`, each taking at most its
     * cap from its own due rows, oldest first, on the (subscriptionId, nextAttemptAt) index: one busy
     * subscription's backlog never stands in front of another's, and nothing sorts the backlog.
     */
    async claim(req: ClaimRequest): Promise<ClaimedDelivery[]> {
      const caps = json([...req.caps].map(([id, n]) => ({ id, n })));
      const rows = await db.sql.query<ClaimedDelivery>(
        CLAIM_SQL,
        [req.after, caps, req.perSubscription, json(req.blocked), req.limit, leaseSec, instanceId],
        'webhook-claim',
      );
      // With read replicas: a receiver that reads back after a webhook (the event, the asset) is never served an
      // older state, whatever wrote the event (a request, a telematics run, the reminder sweep).
      if (rows.length > 0) await noteWrites(rows.map((r) => r.orgId));
      return rows;
    },

    /**
     * Records one attempt, not sent, for the due rows of subscriptions whose breaker is open: one statement for
     * all of them (no claim, no network, no sender share). Each row is FAILED with its next attempt on the
     * schedule, or ABANDONED after the last, with `error` saying why it was not sent; the last answer it got
     * (responseStatus/responseBody) stays. Rows claimed by anyone (a live lease) or locked are left alone, and a
     * paused or disabled subscription's rows stay put.
     */
    skipUnsent(reasons: Map<string, string>, perSubscription: number, scheduleSec: number[]) {
      const subs = json([...reasons].map(([id, err]) => ({ id, err })));
      return db.prisma.$queryRaw<{ id: string; sid: string; status: 'FAILED' | 'ABANDONED'; retry: number | null }[]>`
        WITH due AS (
          SELECT picked.id, picked."createdAt", r.err
          FROM json_to_recordset(${subs}::json) AS r(id text, err text)
          JOIN webhook_subscriptions s ON s.id = r.id AND s.active
          CROSS JOIN LATERAL (${Prisma.raw(dueRowsOf('r.id'))}
            LIMIT ${perSubscription}
            FOR UPDATE OF d SKIP LOCKED
          ) picked
        ), next AS (
          SELECT due.id, due."createdAt", due.err, (${json(scheduleSec)}::jsonb ->> d.attempts)::float8 AS retry
          FROM due JOIN webhook_deliveries d ON d.id = due.id AND d."createdAt" = due."createdAt"
        )
        UPDATE webhook_deliveries d SET
          status = (CASE WHEN n.retry IS NULL THEN 'ABANDONED' ELSE 'FAILED' END)::"DeliveryStatus",
          attempts = d.attempts + 1,
          "lastAttemptAt" = now(),
          "deliveredAt" = NULL,
          "nextAttemptAt" = CASE WHEN n.retry IS NULL THEN NULL ELSE now() + make_interval(secs => n.retry) END,
          "leaseUntil" = NULL,
          "claimedBy" = NULL,
          error = n.err
        FROM next n
        WHERE d.id = n.id AND d."createdAt" = n."createdAt"
        RETURNING d.id, d."subscriptionId" AS sid, d.status::text AS status, n.retry`;
    },

    /** Extends the leases of rows whose sends are still running. */
    async renew(ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await db.prisma.$executeRaw`
        UPDATE webhook_deliveries SET "leaseUntil" = ${lease}
        WHERE id IN (SELECT json_array_elements_text(${json(ids)}::json)) AND "claimedBy" = ${instanceId}`;
    },

    /** Gives rows back untouched (no attempt spent): due again at once for any instance. */
    async release(ids: string[]): Promise<number> {
      if (ids.length === 0) return 0;
      return db.prisma.$executeRaw`
        UPDATE webhook_deliveries SET "leaseUntil" = NULL, "claimedBy" = NULL
        WHERE id IN (SELECT json_array_elements_text(${json(ids)}::json)) AND "claimedBy" = ${instanceId}`;
    },

    /**
     * At start-up: claims this instance held when it last stopped (a crash) are freed at once. The embedded
     * database has one process by construction, so there every claim is stale.
     */
    releaseStale(): Promise<number> {
      const everyClaim = db.kind === 'pglite';
      return db.prisma.$executeRaw`
        UPDATE webhook_deliveries SET "leaseUntil" = NULL, "claimedBy" = NULL
        WHERE status IN ('PENDING', 'FAILED') AND "claimedBy" IS NOT NULL AND (${everyClaim} OR "claimedBy" = ${instanceId})`;
    },

    /**
     * Writes many outcomes in one statement. A row is written only while this instance still holds its
     * claim for that attempt, so a late writer never overwrites a newer claim. Returns the ids written.
     *
     * The same statement keeps each subscription's endpoint health for the auto-disable job: `failingSince`
     * (first failed attempt since the last success; cleared by a success) and `lastFailureAt` (to the minute).
     * Only rows that change are touched (a healthy subscription's successes write nothing, a failing one's at
     * most once a minute), and they are locked in id order so two instances' batches never deadlock on them.
     */
    async record(outcomes: RecordedOutcome[]): Promise<Set<string>> {
      const rows = json(
        outcomes.map((o) => ({
          id: o.id,
          status: o.status,
          attempts: o.attempts,
          at: o.attemptAt.toISOString(),
          retry: o.retryInSec,
          rs: o.responseStatus,
          body: o.responseBody,
          err: o.error,
        })),
      );
      const written = await db.sql.query<{ id: string; orgId: string }>(
        RECORD_SQL,
        [rows, instanceId],
        'webhook-record',
      );
      // With read replicas: a read of the delivery history after this never shows the attempt as not made.
      await noteWrites(written.map((r) => r.orgId));
      return new Set(written.map((r) => r.id));
    },
  };
}

export type Claims = ReturnType<typeof createClaims>;
