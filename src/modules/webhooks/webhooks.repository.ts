import type { Database } from '../../db/database.ts';
import { DELIVERIES_CHANNEL } from '../../events/outbox.ts';
import type { WebhookDelivery } from '../../generated/prisma/client.ts';
import { REQUEUE_LOG_MAX } from './webhooks.schemas.ts';

/** Who re-queued a delivery and how: one entry of the row's `requeues` log. */
export interface RequeueBy {
  at: Date;
  via: 'resend' | 'recover';
  actorId: string | null;
}

/**
 * A re-queue in SQL, shared by resend and recover (columns of `d` are the row before the change):
 * DELIVERED and ABANDONED rows start a new cycle (PENDING, attempts 0, due now); a FAILED row waiting for its
 * next retry is brought forward to now and keeps its attempts. Either way the row keeps its id (the envelope
 * id), its last answer (until the next attempt replaces it), and gains a log entry (the last 20 are kept).
 */
const REQUEUE_SET = `
  status = CASE WHEN d.status = 'FAILED' THEN d.status ELSE 'PENDING'::"DeliveryStatus" END,
  attempts = CASE WHEN d.status = 'FAILED' THEN d.attempts ELSE 0 END,
  "nextAttemptAt" = now(),
  "deliveredAt" = NULL,
  "leaseUntil" = NULL,
  "claimedBy" = NULL,
  requeues = (CASE WHEN jsonb_array_length(d.requeues) >= ${REQUEUE_LOG_MAX} THEN d.requeues - 0 ELSE d.requeues END)
    || jsonb_build_array(jsonb_build_object('at', $1::text, 'via', $2::text, 'actorId', $3::text,
         'previousStatus', d.status::text, 'previousAttempts', d.attempts))`;

/**
 * Which rows a re-queue may touch: finished ones (DELIVERED, ABANDONED), and FAILED ones whose retry is still
 * ahead and that no dispatcher holds. A row already due or in flight is left alone: re-queueing it again
 * would change nothing but its log, so repeating a resend or a recover never queues anything twice.
 */
const REQUEUABLE = `(d.status IN ('DELIVERED', 'ABANDONED')
  OR (d.status = 'FAILED' AND d."nextAttemptAt" > now() AND (d."leaseUntil" IS NULL OR d."leaseUntil" < now())))`;

const requeueParams = (by: RequeueBy) => [by.at.toISOString(), by.via, by.actorId];

/** Wakes every instance's dispatcher (LISTEN/NOTIFY, sent at commit) when the statement re-queued anything. */
const NOTIFY_MOVED = `(SELECT pg_notify('${DELIVERIES_CHANNEL}', '')::text FROM (SELECT 1 FROM moved LIMIT 1) q) AS notified`;

export function createWebhookRepository(db: Database) {
  return {
    /** Re-queues one delivery if it may be (see REQUEUABLE); returns the row after the call and whether it moved. */
    async resend(orgId: string, subscriptionId: string, deliveryId: string, by: RequeueBy) {
      const rows = await db.sql.query<WebhookDelivery & { requeued: boolean }>(
        `WITH target AS (
           SELECT d.* FROM webhook_deliveries d
           WHERE d.id = $4 AND d."subscriptionId" = $5 AND d."orgId" = $6
           FOR UPDATE
         ), moved AS (
           UPDATE webhook_deliveries d SET ${REQUEUE_SET}
           FROM target t WHERE d.id = t.id AND ${REQUEUABLE}
           RETURNING d.*
         )
         SELECT m.*, true AS requeued, ${NOTIFY_MOVED} FROM moved m
         UNION ALL
         SELECT t.*, false AS requeued, NULL AS notified FROM target t WHERE NOT EXISTS (SELECT 1 FROM moved)`,
        [...requeueParams(by), deliveryId, subscriptionId, orgId],
      );
      return rows[0] ?? null;
    },

    /**
     * Re-queues the subscription's FAILED and ABANDONED deliveries created in [since, until), oldest first,
     * after the cursor, at most `limit` in one statement. Each status is one range of the index
     * (subscriptionId, status, createdAt, id); the UPDATE re-checks every row, so two concurrent recovers of one
     * window re-queue each delivery once.
     */
    async recover(
      orgId: string,
      subscriptionId: string,
      window: { since: Date; until: Date; after: [Date, string] | null; limit: number },
      by: RequeueBy,
    ) {
      const range = (status: string, extra = '') =>
        `(SELECT id, "createdAt" FROM webhook_deliveries d
          WHERE d."subscriptionId" = $4 AND d.status = '${status}' ${extra}
            AND d."createdAt" >= $5 AND d."createdAt" < $6 AND (d."createdAt", d.id) > ($7::timestamptz, $8::text)
          ORDER BY d."createdAt", d.id LIMIT $9)`;
      const [row] = await db.sql.query<{
        requeued: number;
        picked: number;
        lastAt: Date | null;
        lastId: string | null;
      }>(
        `WITH picked AS (
           SELECT id, "createdAt" FROM (
             ${range('ABANDONED')}
             UNION ALL
             ${range('FAILED', `AND d."nextAttemptAt" > now() AND (d."leaseUntil" IS NULL OR d."leaseUntil" < now())`)}
           ) r ORDER BY "createdAt", id LIMIT $9
         ), moved AS (
           UPDATE webhook_deliveries d SET ${REQUEUE_SET}
           FROM picked p WHERE d.id = p.id AND d."orgId" = $10 AND d.status IN ('FAILED', 'ABANDONED') AND ${REQUEUABLE}
           RETURNING d.id
         ), last AS (SELECT "createdAt", id FROM picked ORDER BY "createdAt" DESC, id DESC LIMIT 1)
         SELECT (SELECT count(*)::int FROM moved) AS requeued, (SELECT count(*)::int FROM picked) AS picked,
                (SELECT "createdAt" FROM last) AS "lastAt", (SELECT id FROM last) AS "lastId", ${NOTIFY_MOVED}`,
        [
          ...requeueParams(by),
          subscriptionId,
          window.since.toISOString(),
          window.until.toISOString(),
          window.after ? window.after[0].toISOString() : '-infinity',
          window.after ? window.after[1] : '',
          window.limit,
          orgId,
        ],
      );
      return row;
    },

    /**
     * The auto-disable sweep, one statement over the index on failingSince: up to 100 active subscriptions whose
     * attempts have all failed since before `failingBefore` and that failed again after `failedAfter` is
     * disabled with the reason, and its organisation's people get one EMAIL notification. Its queued deliveries
     * are abandoned afterwards by abandonQueued, in bounded statements (a deep backlog would not fit in one).
     */
    async disableFailing(now: Date, failingBefore: Date, failedAfter: Date, reason: string) {
      return db.sql.query<{ id: string; orgId: string; url: string }>(
        `WITH disabled AS (
           UPDATE webhook_subscriptions s SET
             active = false, "disabledAt" = $1::timestamptz, "updatedAt" = $1::timestamptz,
             "disabledReason" = $4 || ' since ' || to_char(s."failingSince" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           WHERE s.id IN (
             -- A bounded batch per sweep (the next sweep takes the rest), never two instances on one row.
             SELECT c.id FROM webhook_subscriptions c
             WHERE c.active AND c."failingSince" <= $2::timestamptz AND c."lastFailureAt" > $3::timestamptz
             ORDER BY c."failingSince" LIMIT 100 FOR UPDATE SKIP LOCKED
           )
           RETURNING s.id, s."orgId", s.url, s.description, s."disabledReason", s."failingSince"
         ), notified AS (
           INSERT INTO notifications (id, "orgId", channel, kind, subject, body, payload, "dedupeKey")
           SELECT gen_random_uuid()::text, x."orgId", 'EMAIL', 'webhook.disabled',
             'Webhook endpoint disabled: ' || x.url,
             'The webhook subscription ' || x.id || ' (' || x.url || ') was disabled: ' || x."disabledReason" || '.'
               || E'\\nFix the endpoint, re-enable it with PATCH /api/v1/webhooks/' || x.id || ' {"active": true}, then'
               || ' re-send what it missed with POST /api/v1/webhooks/' || x.id || '/recover.',
             jsonb_build_object(
               'subscriptionId', x.id, 'url', x.url, 'description', x.description, 'reason', x."disabledReason",
               'failingSince', x."failingSince", 'disabledAt', $1::timestamptz,
               'recipients', (SELECT COALESCE(jsonb_agg(jsonb_build_object('userId', u.id, 'email', u.email, 'name', u.name)
                                ORDER BY u."createdAt"), '[]'::jsonb)
                              FROM users u WHERE u."orgId" = x."orgId" AND u."removedAt" IS NULL)),
             'webhook-disabled:' || x.id || ':' || $5::text
           FROM disabled x
           ON CONFLICT ("orgId", "dedupeKey") DO NOTHING
           RETURNING 1
         )
         SELECT x.id, x."orgId", x.url FROM disabled x`,
        [now.toISOString(), failingBefore.toISOString(), failedAfter.toISOString(), reason, now.toISOString()],
      );
    },

    /**
     * Up to 100 inactive subscriptions whose disabledReason starts with `reasonPrefix` and that still have queued
     * deliveries (each checked through webhook_deliveries(subscriptionId, status, createdAt, id); subscriptions
     * are few, and this runs once per auto-disable sweep).
     */
    async disabledWithBacklog(reasonPrefix: string) {
      const rows = await db.sql.query<{ id: string }>(
        `SELECT s.id FROM webhook_subscriptions s
         WHERE NOT s.active AND starts_with(s."disabledReason", $1)
           AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d."subscriptionId" = s.id AND d.status IN ('PENDING', 'FAILED'))
         LIMIT 100`,
        [reasonPrefix],
      );
      return rows.map((r) => r.id);
    },

    /**
     * Up to `limit` queued (PENDING or FAILED) deliveries of these subscriptions, while they are still disabled,
     * become ABANDONED with the reason (history shows why; a recover after re-enabling sends them again). Read
     * through webhook_deliveries(subscriptionId, status, createdAt, id). The status is checked again on the row
     * the UPDATE locks: a send finishing meanwhile (DELIVERED) is not overwritten. Returns how many rows it
     * picked (fewer than `limit`: nothing left) and how many it abandoned per subscription.
     */
    async abandonQueued(subscriptionIds: string[], limit: number) {
      const [row] = await db.sql.query<{ picked: number; moved: { subscriptionId: string; n: number }[] }>(
        `WITH picked AS (
           SELECT d.id FROM webhook_subscriptions s
           JOIN webhook_deliveries d ON d."subscriptionId" = s.id AND d.status IN ('PENDING', 'FAILED')
           WHERE s.id = ANY($1::text[]) AND NOT s.active
           LIMIT $2
         ), moved AS (
           UPDATE webhook_deliveries d SET
             status = 'ABANDONED', "nextAttemptAt" = NULL,
             error = 'not sent: subscription disabled (' || s."disabledReason" || ')' || COALESCE('; last error: ' || d.error, '')
           FROM webhook_subscriptions s
           WHERE d.id IN (SELECT id FROM picked) AND s.id = d."subscriptionId" AND NOT s.active
             AND d.status IN ('PENDING', 'FAILED')
           RETURNING d."subscriptionId"
         )
         SELECT (SELECT count(*)::int FROM picked) AS picked,
           coalesce((SELECT json_agg(m) FROM (SELECT "subscriptionId", count(*)::int AS n FROM moved GROUP BY 1) m), '[]'::json) AS moved`,
        [subscriptionIds, limit],
      );
      return row;
    },
  };
}

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;
