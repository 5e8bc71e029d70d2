import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/database.ts';
import type { NotificationMessage, NotificationTransport } from './notification-transport.adapter.ts';

/**
 * Seconds after creation at which attempt 1, 2, ... may run. After the last attempt fails the row is
 * FAILED for good. The offsets double as a lease: a claimed row is not claimable again until the next
 * offset, so several processes never send the same row at the same time.
 */
export const NOTIFICATION_RETRY_OFFSETS_SEC = [0, 60, 300, 1800, 7200] as const;
export const NOTIFICATION_MAX_ATTEMPTS = NOTIFICATION_RETRY_OFFSETS_SEC.length;

interface ClaimedRow {
  id: string;
  orgId: string;
  channel: 'PUSH' | 'EMAIL';
  kind: string;
  subject: string;
  body: string;
  payload: Record<string, unknown>;
  attempts: number;
}

export interface SenderOptions {
  db: Database;
  log: FastifyBaseLogger;
  transport: NotificationTransport;
  batchSize?: number;
  /** A transport call taking longer counts as failed (and the row is retried later). */
  timeoutMs?: number;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`transport did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Delivers PENDING notifications through the transport. A row is claimed (attempts + 1) in a short
 * statement with SKIP LOCKED, sent outside any transaction, then marked SENT, or left PENDING with the
 * error for the next offset, or FAILED after the last attempt.
 */
export function createNotificationSender({ db, log, transport, batchSize = 50, timeoutMs = 10_000 }: SenderOptions) {
  const offsets = `ARRAY[${NOTIFICATION_RETRY_OFFSETS_SEC.join(',')}]`;

  async function claim(): Promise<ClaimedRow[]> {
    return db.prisma.$queryRawUnsafe<ClaimedRow[]>(
      `UPDATE notifications SET attempts = attempts + 1
       WHERE id IN (
         SELECT id FROM notifications
         WHERE status = 'PENDING' AND attempts < ${NOTIFICATION_MAX_ATTEMPTS}
           AND "createdAt" <= now() - (${offsets})[attempts + 1] * interval '1 second'
         ORDER BY "createdAt", id
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
       RETURNING id, "orgId", channel::text AS channel, kind, subject, body, payload, attempts`,
      batchSize,
    );
  }

  /**
   * A sender that died after claiming the last attempt leaves the row PENDING with no attempts left, where no
   * claim will ever pick it up: once its last attempt is well overdue (15 minutes), it is marked FAILED.
   */
  function failStranded(): Promise<number> {
    const lastOffset = NOTIFICATION_RETRY_OFFSETS_SEC[NOTIFICATION_MAX_ATTEMPTS - 1];
    return db.prisma.$executeRawUnsafe(
      `UPDATE notifications SET status = 'FAILED', error = COALESCE(error, 'the last attempt never reported back')
       WHERE status = 'PENDING' AND attempts >= ${NOTIFICATION_MAX_ATTEMPTS}
         AND "createdAt" <= now() - interval '${lastOffset + 900} seconds'`,
    );
  }

  return {
    transport,
    /** One pass over the due rows; returns what happened to each. */
    async sendPending(): Promise<{ sent: number; retrying: number; failed: number }> {
      await failStranded();
      const rows = await claim();
      const outcome = { sent: 0, retrying: 0, failed: 0 };
      for (const row of rows) {
        const message: NotificationMessage = {
          id: row.id,
          orgId: row.orgId,
          channel: row.channel,
          kind: row.kind,
          subject: row.subject,
          body: row.body,
          payload: row.payload ?? {},
          attempt: row.attempts,
        };
        try {
          await withTimeout(transport.send(message), timeoutMs);
          await db.prisma.notification.update({
            where: { id: row.id },
            data: { status: 'SENT', sentAt: new Date(), error: null },
          });
          outcome.sent++;
        } catch (err) {
          const final = row.attempts >= NOTIFICATION_MAX_ATTEMPTS;
          const error = (err instanceof Error ? err.message : String(err)).slice(0, 500);
          await db.prisma.notification.update({
            where: { id: row.id },
            data: { status: final ? 'FAILED' : 'PENDING', error },
          });
          log.warn(
            {
              notificationId: row.id,
              orgId: row.orgId,
              transport: transport.name,
              attempt: row.attempts,
              final,
              error,
            },
            'notification send failed',
          );
          if (final) outcome.failed++;
          else outcome.retrying++;
        }
      }
      return outcome;
    },
  };
}

export type NotificationSender = ReturnType<typeof createNotificationSender>;
