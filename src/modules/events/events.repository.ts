import type { SqlRunner } from '../../db/database.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { EventRow, ListEventsInput } from './events.schemas.ts';

const COLUMNS = `id, "orgId", type, data, "createdAt"`;

/**
 * One page of the feed, newest first, on events(orgId, createdAt, id) read backwards from the cursor. A type
 * filter becomes one range per type on events(orgId, type, createdAt, id), each cut to the page and merged,
 * so a page reads at most types x page rows whatever the organisation's history holds.
 */
export function listEvents(
  sql: SqlRunner,
  orgId: string,
  query: ListEventsInput,
  after: [Date, string] | null,
): Promise<EventRow[]> {
  // Only unknown types asked for: nothing can match (and no statement is worth sending).
  if (query.type?.length === 0) return Promise.resolve([]);
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.since) where.push(`"createdAt" >= $${params.push(query.since)}::timestamptz`);
  if (query.until) where.push(`"createdAt" < $${params.push(query.until)}::timestamptz`);
  // The cursor's time as a plain bound too: partitions are pruned by it (a row comparison prunes nothing).
  if (after) where.push(`"createdAt" <= $${params.push(after[0].toISOString())}::timestamptz`);
  const { text, params: all } = keysetSql({
    from: 'events',
    select: COLUMNS,
    where,
    params,
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
    split: query.type ? { column: 'type', values: query.type } : undefined,
  });
  return sql.query<EventRow>(text, all);
}

export async function findEvent(sql: SqlRunner, orgId: string, id: string): Promise<EventRow | null> {
  const [row] = await sql.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE id = $1 AND "orgId" = $2`, [id, orgId]);
  return row ?? null;
}
