import type { WorkOrder } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { resolveFlag } from '../flags/flags.operations.ts';
import { completeForWorkOrder } from '../service-reminders/service-reminders.operations.ts';
import { repairTotals } from './work-orders.repository.ts';

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
