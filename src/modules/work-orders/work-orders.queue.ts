import type { Prisma, WorkOrder, WorkOrderPriority } from '../../generated/prisma/client.ts';
import { ValidationError } from '../../http/errors.ts';
import { decodeCursor } from '../../http/pagination.ts';
import { WORK_ORDER_PRIORITIES } from './work-orders.schemas.ts';

/**
 * The work-order queue order: priority desc (URGENT first; the database enum is declared low to high),
 * dueAt asc with undated orders last, createdAt desc, id desc. The cursor carries all four keys so a
 * page boundary inside a run of equal priorities, equal due dates or equal creation times stays exact.
 */
export const queueOrder: Prisma.WorkOrderOrderByWithRelationInput[] = [
  { priority: 'desc' },
  { dueAt: { sort: 'asc', nulls: 'last' } },
  { createdAt: 'desc' },
  { id: 'desc' },
];

type QueueKey = [WorkOrderPriority, string | null, string, string];

/** The sort key of a row, as carried by the cursor. */
export const queueKey = (w: Pick<WorkOrder, 'priority' | 'dueAt' | 'createdAt' | 'id'>) =>
  [w.priority, w.dueAt?.toISOString() ?? null, w.createdAt.toISOString(), w.id];

const invalidCursor = () => new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });

function parseDate(value: unknown): Date {
  const at = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw invalidCursor();
  return at;
}

/** Keyset condition: rows strictly after the cursor row in queueOrder. */
export function afterQueueCursor(cursor: string | undefined): Prisma.WorkOrderWhereInput {
  const values = decodeCursor(cursor, 4);
  if (!values) return {};
  const [priority, due, created, id] = values as QueueKey;
  const rank = WORK_ORDER_PRIORITIES.indexOf(priority);
  if (rank < 0 || typeof id !== 'string') throw invalidCursor();
  const createdAt = parseDate(created);
  const laterInTie: Prisma.WorkOrderWhereInput = { OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] };
  // Nulls sort last: after a dated row come later dates and every undated row; after an undated row,
  // only undated rows that follow it on createdAt/id.
  const samePriority: Prisma.WorkOrderWhereInput =
    due === null
      ? { AND: [{ dueAt: null }, laterInTie] }
      : (() => {
          const dueAt = parseDate(due);
          return { OR: [{ dueAt: { gt: dueAt } }, { dueAt: null }, { AND: [{ dueAt }, laterInTie] }] };
        })();
  return {
    OR: [
      { priority: { in: WORK_ORDER_PRIORITIES.slice(0, rank) as WorkOrderPriority[] } },
      { AND: [{ priority }, samePriority] },
    ],
  };
}
