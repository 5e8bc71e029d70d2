import type { WorkOrder, WorkOrderStatus } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { resolveFlag } from '../flags/flags.operations.ts';
import { completeForWorkOrder } from '../service-reminders/service-reminders.operations.ts';
import { ACTIVE_STATUSES } from './work-orders.schemas.ts';

/**
 * Allowed status moves. The four active states move freely among themselves and to DONE or CANCELED.
 * DONE is terminal: the order carries its repairs and its completion event, so follow-up work gets a
 * new order. CANCELED can be re-opened into any active state, but not closed directly as DONE.
 * Setting the current status again is always a no-op.
 */
export function allowedNextStatuses(from: WorkOrderStatus): WorkOrderStatus[] {
  if (from === 'DONE') return [];
  if (from === 'CANCELED') return [...ACTIVE_STATUSES];
  return [...ACTIVE_STATUSES, 'CANCELED', 'DONE'].filter((s) => s !== from) as WorkOrderStatus[];
}

export function assertStatusMove(from: WorkOrderStatus, to: WorkOrderStatus): void {
  if (from === to) return;
  const allowed = allowedNextStatuses(from);
  if (!allowed.includes(to)) {
    throw conflict(
      'invalid_status_transition',
      allowed.length === 0
        ? `Work order is ${from}, a terminal status; it cannot move to ${to}`
        : `Work order is ${from}; it can move to ${allowed.join(', ')}, not ${to}`,
    );
  }
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

/**
 * Records that a (locked) work order has just become DONE: workorder.completed with the repair totals,
 * then the linked flag's automatic resolution when the order was closed with a repair log, then the completion of
 * the service reminders it covers.
 */
export async function recordCompletion(tx: Tx, ctx: RequestContext, wo: WorkOrder): Promise<void> {
  const totals = await repairTotals(tx, ctx.orgId, wo.id);
  await emit(tx, ctx.orgId, 'workorder.completed', {
    workOrderId: wo.id,
    number: wo.number,
    title: wo.title,
    assetId: wo.assetId,
    projectId: wo.projectId,
    flagId: wo.flagId,
    totalLaborHours: totals.totalLaborHours,
    totalCost: totals.totalCost,
    completedAt: (wo.completedAt ?? new Date()).toISOString(),
    completedById: ctx.actorId,
  });
  if (totals.count > 0) await resolveLinkedFlag(tx, ctx, wo);
  // The service reminders the order covers complete at the asset's current reading, in this transaction.
  await completeForWorkOrder(tx, ctx, wo.id);
}

/**
 * Flag table: "work order closed with a repair log" resolves the linked flag. Called when a DONE order
 * has at least one repair (by the closing repair, by PATCH to DONE after repairs were logged, or by a
 * repair logged late on an order already DONE). No-op when there is no open linked flag.
 */
export async function resolveLinkedFlag(tx: Tx, ctx: RequestContext, wo: WorkOrder): Promise<void> {
  if (!wo.flagId) return;
  const flag = await tx.flag.findFirst({
    where: { id: wo.flagId, orgId: ctx.orgId, status: { in: ['OPEN', 'IN_PROGRESS'] } },
  });
  if (!flag) return;
  await resolveFlag(tx, ctx, flag, {
    resolutionNote: `Closed with a repair log on work order #${wo.number}`,
    workOrderId: wo.id,
  });
}

/** Marks a locked, not-yet-DONE work order DONE (a repair closing it) and records the completion. */
export async function completeWorkOrder(tx: Tx, ctx: RequestContext, wo: WorkOrder): Promise<WorkOrder> {
  const done = await tx.workOrder.update({ where: { id: wo.id }, data: { status: 'DONE', completedAt: new Date() } });
  await recordCompletion(tx, ctx, done);
  return done;
}
