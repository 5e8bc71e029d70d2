import type { SqlRunner } from '../../db/database.ts';
import type { WorkOrder, WorkOrderPriority } from '../../generated/prisma/client.ts';
import { ValidationError } from '../../core/errors.ts';
import { decodeCursor, enumFilter } from '../../core/pagination.ts';
import { ACTIVE_STATUSES, WORK_ORDER_PRIORITIES, type ListWorkOrdersFilter } from './work-orders.schemas.ts';

/**
 * The work-order queue order: priority desc (URGENT first; the database enum is declared low to high),
 * dueAt asc with undated orders last, createdAt desc, id desc. The cursor carries all four keys so a
 * page boundary inside a run of equal priorities, equal due dates or equal creation times stays exact.
 */
const ORDER_BY = 'ORDER BY priority DESC, "dueAt" ASC NULLS LAST, "createdAt" DESC, id DESC';

type QueueKey = [WorkOrderPriority, string | null, string, string];

/** The sort key of a row, as carried by the cursor. */
export const queueKey = (w: Pick<WorkOrder, 'priority' | 'dueAt' | 'createdAt' | 'id'>) => [
  w.priority,
  w.dueAt?.toISOString() ?? null,
  w.createdAt.toISOString(),
  w.id,
];

const invalidCursor = () => new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });

function parseDate(value: unknown): string {
  const at = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw invalidCursor();
  return at.toISOString();
}

/**
 * Rows strictly after the cursor row in queue order, as disjoint ranges that each read the queue index in
 * its own order (the directions are mixed, so one row-value comparison cannot express it): the rest of the
 * cursor's (priority, dueAt) run, later due dates of the same priority, its undated rows, lower priorities.
 */
function afterCursor(cursor: string | undefined, bind: (v: unknown, cast?: string) => string): string[] {
  const values = decodeCursor(cursor, 4);
  if (!values) return ['true'];
  const [priority, due, created, id] = values as QueueKey;
  if (!WORK_ORDER_PRIORITIES.includes(priority) || typeof id !== 'string') throw invalidCursor();
  const p = bind(priority, '"WorkOrderPriority"');
  const tie = `("createdAt", id) < (${bind(parseDate(created), 'timestamptz')}, ${bind(id)})`;
  if (due === null) return [`priority = ${p} AND "dueAt" IS NULL AND ${tie}`, `priority < ${p}`];
  const d = bind(parseDate(due), 'timestamptz');
  return [
    `priority = ${p} AND "dueAt" = ${d} AND ${tie}`,
    `priority = ${p} AND "dueAt" > ${d}`,
    `priority = ${p} AND "dueAt" IS NULL`,
    `priority < ${p}`,
  ];
}

/**
 * One page of the queue. The default (active) queue reads the partial index work_orders_active_queue_idx;
 * another status set reads one range per status of work_orders(orgId, status, <queue order>). Every range is
 * cut to the page before the merge, so a page reads at most ranges x page rows at any depth.
 */
export async function listWorkOrders(sql: SqlRunner, orgId: string, query: ListWorkOrdersFilter): Promise<WorkOrder[]> {
  const params: unknown[] = [orgId];
  const bind = (v: unknown, cast?: string) => `$${params.push(v)}${cast ? `::${cast}` : ''}`;
  const where = ['"orgId" = $1'];
  enumFilter(where, params, 'priority', 'WorkOrderPriority', query.priority, WORK_ORDER_PRIORITIES);
  if (query.assignedToId) where.push(`"assignedToId" = ${bind(query.assignedToId)}`);
  if (query.assetId) where.push(`"assetId" = ${bind(query.assetId)}`);
  const ranges = afterCursor(query.cursor, bind);
  const statuses = [...new Set(query.status)];
  const active = statuses.length === ACTIVE_STATUSES.length && ACTIVE_STATUSES.every((s) => statuses.includes(s));
  // Literal statuses for the active queue: the planner must see that the query implies the partial index's predicate.
  const statusSets = active
    ? [`status IN (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(', ')})`]
    : statuses.map((s) => `status = ${bind(s, '"WorkOrderStatus"')}`);
  if (statusSets.length === 0) return [];
  const limit = bind(query.limit + 1);
  const branches = statusSets.flatMap((status) =>
    ranges.map(
      (range) =>
        `(SELECT * FROM work_orders WHERE ${[...where, status, range].join(' AND ')} ${ORDER_BY} LIMIT ${limit})`,
    ),
  );
  const text =
    branches.length === 1
      ? branches[0].slice(1, -1)
      : `SELECT * FROM (${branches.join(' UNION ALL ')}) AS page ${ORDER_BY} LIMIT ${limit}`;
  return sql.query<WorkOrder>(text, params);
}
