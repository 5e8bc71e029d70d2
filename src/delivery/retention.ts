import type { Database } from '../db/database.ts';
import { dropPartition, isPartitioned, listPartitions } from '../db/partitions.ts';

export const WEBHOOK_HISTORY_DAYS = 30;
const CHUNK = 5_000;

/**
 * Removes delivery history older than `days` (WEBHOOK_HISTORY_DAYS, 30 by default; whatever its status: by
 * then a queued row has long outlived the retry schedule), then events older than that which no delivery
 * refers to any more: the event feed (GET /events) keeps exactly as long as delivery history, and an event
 * never disappears from under a delivery that still names it. On partitioned tables a month leaves whole, by
 * dropping its partition once all of it is older than the cutoff (a brief lock whatever its size); a month of
 * events that a younger delivery still names loses its other rows instead, until nothing names it. The one
 * partition longer than a month, the history a converted installation attached whole, loses its expired rows in
 * chunks as the table did before its conversion, until all of it is past the cutoff and it is dropped.
 */
export async function pruneWebhookHistory(
  db: Pick<Database, 'sql' | 'kind' | 'prisma'>,
  now = new Date(),
  days = WEBHOOK_HISTORY_DAYS,
): Promise<{ deliveries: number; events: number }> {
  const cutoff = new Date(now.getTime() - days * 24 * 3600 * 1000);
  if (!(await isPartitioned(db.sql, 'events')) || !(await isPartitioned(db.sql, 'webhook_deliveries'))) {
    return pruneRows(db, cutoff);
  }
  let deliveries = 0;
  for (const part of await listPartitions(db.sql, 'webhook_deliveries')) {
    if (part.to > cutoff) {
      if (spansMonths(part, cutoff)) deliveries += await deleteExpiredDeliveries(db, part.name, cutoff);
      continue;
    }
    deliveries += await countRows(db, part.name);
    await dropPartition(db, 'webhook_deliveries', part.name);
  }
  let events = 0;
  for (const part of await listPartitions(db.sql, 'events')) {
    if (part.to > cutoff) {
      if (spansMonths(part, cutoff)) events += await deleteUnnamed(db, part.name, cutoff);
      continue;
    }
    // Asked of the partition itself: the converted history's lower bound is no timestamp PostgreSQL takes.
    const [named] = await db.sql.query<{ named: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM "${part.name}" e
         JOIN webhook_deliveries d ON d."eventId" = e.id AND d."eventCreatedAt" = e."createdAt") AS named`,
    );
    if (named?.named) {
      events += await deleteUnnamed(db, part.name);
    } else {
      events += await countRows(db, part.name);
      await dropPartition(db, 'events', part.name);
    }
  }
  return { deliveries, events };
}

/** A partition that began before the cutoff and spans more than a month: a converted installation's history. */
const spansMonths = (part: { from: Date; to: Date }, cutoff: Date) =>
  part.from < cutoff && part.to.getTime() - part.from.getTime() > 32 * 24 * 3600 * 1000;

/** The deliveries of one partition created before the cutoff, in chunks. */
async function deleteExpiredDeliveries(db: Pick<Database, 'prisma'>, partition: string, cutoff: Date) {
  let removed = 0;
  for (;;) {
    const n = await db.prisma.$executeRawUnsafe(
      `DELETE FROM webhook_deliveries WHERE (id, "createdAt") IN (
        SELECT id, "createdAt" FROM "${partition}" WHERE "createdAt" < $1 LIMIT ${CHUNK})`,
      cutoff,
    );
    removed += n;
    if (n < CHUNK) return removed;
  }
}

async function countRows(db: Pick<Database, 'sql'>, partition: string): Promise<number> {
  const [row] = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${partition}"`);
  return row?.n ?? 0;
}

/** The events of one partition (created before the cutoff, when given) that no delivery names, in chunks. */
async function deleteUnnamed(db: Pick<Database, 'prisma'>, partition: string, cutoff?: Date): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await db.prisma.$executeRawUnsafe(
      `DELETE FROM events WHERE (id, "createdAt") IN (
        SELECT e.id, e."createdAt" FROM "${partition}" e
        WHERE ($1::timestamptz IS NULL OR e."createdAt" < $1)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d."eventId" = e.id AND d."eventCreatedAt" = e."createdAt")
        LIMIT ${CHUNK})`,
      cutoff ?? null,
    );
    removed += n;
    if (n < CHUNK) return removed;
  }
}

/** Before the partition conversion: the rows themselves, in chunks so a large backlog never holds long locks. */
async function pruneRows(db: Pick<Database, 'prisma'>, cutoff: Date): Promise<{ deliveries: number; events: number }> {
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
