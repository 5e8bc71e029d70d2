import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { WorkOrder, WorkOrderPriority } from '../../generated/prisma/client.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, enumFilter } from '../../core/pagination.ts';
import { isStorableDate } from '../../core/schemas.ts';
import { ACTIVE_STATUSES, WORK_ORDER_PRIORITIES, type ListWorkOrdersFilter } from './work-orders.schemas.ts';

/**
 * The due-date key of the queue: dueAt ascending with undated orders last, written as a value that sorts
 * descending (the time left until a far-off instant; undated orders get a value below any real one). With it
 * every key of the queue runs one way (priority desc, due key desc, createdAt desc, id desc), so the rows after
 * a cursor are one row-value range of the queue indexes, which index this very expression (migration
 * 20261124120000_work_order_queue_key): a page reads the same index entries at any depth. Both sides of the
 * comparison must be written exactly so for the planner to match the index.
 */
const dueKey = (due: string) => `COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - ${due}, INTERVAL '-1000000 years')`;

/**
 * The work-order queue order: priority desc (URGENT first; the database enum is declared low to high),
 * dueAt asc with undated orders last, createdAt desc, id desc. The cursor carries all four keys so a
 * page boundary inside a run of equal priorities, equal due dates or equal creation times stays exact.
 */
const ORDER_BY = `ORDER BY priority DESC, ${dueKey('"dueAt"')} DESC, "createdAt" DESC, id DESC`;

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
  if (!isStorableDate(at)) throw invalidCursor();
  return at.toISOString();
}

/** Rows strictly after the cursor row in queue order: one row-value comparison on the queue's keys. */
function afterCursor(cursor: string | undefined, bind: (v: unknown, cast?: string) => string): string {
  const values = decodeCursor(cursor, 4);
  if (!values) return 'true';
  const [priority, due, created, id] = values as QueueKey;
  if (!WORK_ORDER_PRIORITIES.includes(priority) || typeof id !== 'string') throw invalidCursor();
  const p = bind(priority, '"WorkOrderPriority"');
  const d = dueKey(bind(due === null ? null : parseDate(due), 'timestamptz'));
  const c = bind(parseDate(created), 'timestamptz');
  return `(priority, ${dueKey('"dueAt"')}, "createdAt", id) < (${p}, ${d}, ${c}, ${bind(id)})`;
}

/**
 * One page of the queue. The default (active) queue reads the partial index work_orders_active_queue_idx;
 * another status set reads one range per status of work_orders_status_queue_idx (orgId, status, <queue keys>),
 * each cut to the page before the merge, so a page reads at most statuses x page rows at any depth.
 */
export async function listWorkOrders(sql: SqlRunner, orgId: string, query: ListWorkOrdersFilter): Promise<WorkOrder[]> {
  const params: unknown[] = [orgId];
  const bind = (v: unknown, cast?: string) => `$${params.push(v)}${cast ? `::${cast}` : ''}`;
  const where = ['"orgId" = $1'];
  enumFilter(where, params, 'priority', 'WorkOrderPriority', query.priority, WORK_ORDER_PRIORITIES);
  if (query.assignedToId) where.push(`"assignedToId" = ${bind(query.assignedToId)}`);
  if (query.assetId) where.push(`"assetId" = ${bind(query.assetId)}`);
  where.push(afterCursor(query.cursor, bind));
  const statuses = [...new Set(query.status)];
  const active = statuses.length === ACTIVE_STATUSES.length && ACTIVE_STATUSES.every((s) => statuses.includes(s));
  // Literal statuses for the active queue: the planner must see that the query implies the partial index's predicate.
  const statusSets = active
    ? [`status IN (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(', ')})`]
    : statuses.map((s) => `status = ${bind(s, '"WorkOrderStatus"')}`);
  if (statusSets.length === 0) return [];
  const limit = bind(query.limit + 1);
  const branches = statusSets.map(
    (status) => `(SELECT * FROM work_orders WHERE ${[...where, status].join(' AND ')} ${ORDER_BY} LIMIT ${limit})`,
  );
  const text =
    branches.length === 1
      ? branches[0].slice(1, -1)
      : `SELECT * FROM (${branches.join(' UNION ALL ')}) AS page ${ORDER_BY} LIMIT ${limit}`;
  return sql.query<WorkOrder>(text, params);
}

/**
 * Loads a work order of the caller's organisation with its row locked until the transaction ends, so
 * concurrent PATCHes and repairs see each other's status and a completion is recorded once.
 */
export async function lockWorkOrder(tx: Tx, orgId: string, id: string): Promise<WorkOrder | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM work_orders WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.workOrder.findFirst({ where: { id, orgId } });
}

export async function lockOwnedWorkOrder(tx: Tx, orgId: string, id: string): Promise<WorkOrder> {
  const wo = await lockWorkOrder(tx, orgId, id);
  if (!wo) throw notFound('Work order');
  return wo;
}

export async function repairTotals(tx: Tx, orgId: string, workOrderId: string) {
  const agg = await tx.repair.aggregate({
    where: { orgId, workOrderId },
    _sum: { laborHours: true, cost: true },
    _count: { _all: true },
  });
  return { count: agg._count._all, totalLaborHours: agg._sum.laborHours ?? 0, totalCost: agg._sum.cost ?? 0 };
}
