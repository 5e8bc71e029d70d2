import type { SqlRunner } from '../../db/database.ts';
import type { ServiceReminder } from '../../generated/prisma/client.ts';
import { ValidationError } from '../../core/errors.ts';
import { decodeCursor } from '../../core/pagination.ts';
import { isStorableDate } from '../../core/schemas.ts';
import { REMINDER_STATUSES, STATUS_RANK } from './service-reminders.rules.ts';
import type { ListRemindersFilter } from './service-reminders.schemas.ts';

export type ReminderListRow = ServiceReminder & { serviceTaskName: string };

/** The urgency order's key, as carried by the cursor: (statusRank, dueKey, id), all ascending. */
export const urgencyKey = (r: Pick<ServiceReminder, 'statusRank' | 'dueKey' | 'id'>) => [
  r.statusRank,
  r.dueKey.toISOString(),
  r.id,
];

const invalidCursor = () => new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });

export function reminderCursor(cursor: string | undefined): [number, Date, string] | null {
  const values = decodeCursor(cursor, 3);
  if (!values) return null;
  const [rank, due, id] = values;
  const at = typeof due === 'string' ? new Date(due) : new Date(NaN);
  if (typeof rank !== 'number' || !Number.isInteger(rank) || typeof id !== 'string' || !isStorableDate(at))
    throw invalidCursor();
  return [rank, at, id];
}

/**
 * One page, most urgent first: statusRank (0 OVERDUE, 1 DUE_SOON, 2 OK, 3 SNOOZED), then the due instant
 * (furthest past / nearest first), then id. Each requested status is one range of the index that leads with
 * the filter's column (orgId, assetId, serviceTaskId or serviceProgramId) and continues in this order, cut to
 * the page before the merge: a page reads at most statuses x page index entries at any depth. Reminders of
 * archived and sold assets are out of the list (the indexes are partial on NOT suspended).
 */
export async function listReminders(
  sql: SqlRunner,
  orgId: string,
  query: ListRemindersFilter,
  after: [number, Date, string] | null,
): Promise<ReminderListRow[]> {
  const params: unknown[] = [orgId];
  const bind = (v: unknown, cast?: string) => `$${params.push(v)}${cast ? `::${cast}` : ''}`;
  const where = ['r."orgId" = $1', 'NOT r.suspended'];
  if (query.assetId) where.push(`r."assetId" = ${bind(query.assetId)}`);
  if (query.serviceTaskId) where.push(`r."serviceTaskId" = ${bind(query.serviceTaskId)}`);
  if (query.serviceProgramId) where.push(`r."serviceProgramId" = ${bind(query.serviceProgramId)}`);
  // Within the cursor's own rank the page resumes after (dueKey, id); the ranks after it start at their beginning.
  const resume = after ? `(r."dueKey", r.id) > (${bind(after[1], 'timestamptz')}, ${bind(after[2])})` : null;
  const ranks = [...new Set(query.status)]
    .filter((s) => REMINDER_STATUSES.includes(s))
    .map((s) => STATUS_RANK[s])
    .filter((rank) => !after || rank >= after[0])
    .sort();
  if (ranks.length === 0) return [];
  const limit = bind(query.limit + 1);
  const order = 'ORDER BY "statusRank", "dueKey", id';
  const branches = ranks.map(
    (rank) =>
      `(SELECT r.* FROM service_reminders r WHERE ${[...where, `r."statusRank" = ${bind(rank, 'int')}`, ...(resume && rank === after![0] ? [resume] : [])].join(' AND ')} ${order.replace(/"statusRank"|"dueKey"|id/g, (c) => `r.${c}`)} LIMIT ${limit})`,
  );
  const page =
    branches.length === 1
      ? branches[0].slice(1, -1)
      : `SELECT * FROM (${branches.join(' UNION ALL ')}) AS page ${order} LIMIT ${limit}`;
  // The task's current name per row of the page (a lookup by primary key each); the page keeps its order.
  return sql.query<ReminderListRow>(
    `SELECT p.*, (SELECT t.name FROM service_tasks t WHERE t.id = p."serviceTaskId") AS "serviceTaskName" FROM (${page}) p`,
    params,
  );
}
