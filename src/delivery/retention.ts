import type { Database } from '../db/database.ts';

export const WEBHOOK_HISTORY_DAYS = 30;
const CHUNK = 5_000;

/**
 * Removes delivery history older than `days` (WEBHOOK_HISTORY_DAYS, 30 by default; whatever its status: by
 * then a queued row has long outlived the retry schedule), then events older than that which no delivery
 * refers to any more: the event feed (GET /events) keeps exactly as long as delivery history, and an event
 * never disappears from under a delivery that still names it. Deletes in chunks so a large backlog never
 * holds long locks.
 */
export async function pruneWebhookHistory(
  db: Database,
  now = new Date(),
  days = WEBHOOK_HISTORY_DAYS,
): Promise<{ deliveries: number; events: number }> {
  const cutoff = new Date(now.getTime() - days * 24 * 3600 * 1000);
  let deliveries = 0;
  for (;;) {
    const n = await db.prisma.$executeRaw`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE "createdAt" < ${cutoff} LIMIT ${CHUNK})`;
    deliveries += n;
    if (n < CHUNK) break;
  }
  let events = 0;
  for (;;) {
    const n = await db.prisma.$executeRaw`
      DELETE FROM events WHERE id IN (
        SELECT e.id FROM events e
        WHERE e."createdAt" < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d."eventId" = e.id)
        LIMIT ${CHUNK})`;
    events += n;
    if (n < CHUNK) break;
  }
  return { deliveries, events };
}
