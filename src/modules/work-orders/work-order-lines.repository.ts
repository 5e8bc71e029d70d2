import type { Tx } from '../../db/transaction.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { dec, sum, toWire } from '../../core/money.ts';
import type { LaborLineRow, PartLineRow } from './work-order-lines.schemas.ts';

/**
 * The work order, share-locked until the transaction ends so its status cannot move to DONE or CANCELED under a
 * line being written (lines of concurrent requests do not wait on each other); 409 work_order_closed when it is.
 */
export async function openWorkOrder(tx: Tx, orgId: string, id: string): Promise<void> {
  const rows = await tx.$queryRaw<{ status: string }[]>`
    SELECT "status"::text AS "status" FROM "work_orders" WHERE "id" = ${id} AND "orgId" = ${orgId} FOR SHARE`;
  if (!rows[0]) throw notFound('Work order');
  if (rows[0].status === 'DONE' || rows[0].status === 'CANCELED')
    throw conflict('work_order_closed', `A ${rows[0].status} work order's part and labour lines cannot change`);
}

export function partLinesOf(tx: Tx, orgId: string, workOrderId: string): Promise<PartLineRow[]> {
  return tx.workOrderPartLine.findMany({
    where: { orgId, workOrderId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

export function laborLinesOf(tx: Tx, orgId: string, workOrderId: string): Promise<LaborLineRow[]> {
  return tx.workOrderLaborLine.findMany({
    where: { orgId, workOrderId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

export function costsOf(parts: PartLineRow[], labor: LaborLineRow[]) {
  const p = sum(parts.map((l) => dec(l.totalCost)));
  const l = sum(labor.map((x) => dec(x.totalCost)));
  return { parts: toWire(p, 2), labor: toWire(l, 2), total: toWire(p.plus(l), 2) };
}
