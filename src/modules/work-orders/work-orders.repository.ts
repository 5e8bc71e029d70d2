import type { WorkOrder, WorkOrderPriority, WorkOrderStatus } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../http/context.ts';

/**
 * Next work-order number of the organisation. The UPDATE takes the organisation row's lock until the
 * transaction ends, so concurrent creates queue up: numbers are unique and, because a rolled-back
 * transaction also rolls back its increment, gap-free.
 */
export async function allocateWorkOrderNumber(tx: Tx, orgId: string): Promise<number> {
  const rows = await tx.$queryRaw<{ workOrderSeq: number }[]>`
    UPDATE organizations SET "workOrderSeq" = "workOrderSeq" + 1 WHERE id = ${orgId} RETURNING "workOrderSeq"`;
  if (rows.length !== 1) throw new Error(`organisation ${orgId} not found while numbering a work order`);
  return Number(rows[0].workOrderSeq);
}

export interface NewWorkOrder {
  /** Default "Work order #<number>". */
  title?: string;
  description?: string | null;
  status?: WorkOrderStatus;
  priority?: WorkOrderPriority;
  assetId?: string | null;
  projectId?: string | null;
  flagId?: string | null;
  toolId?: string | null;
  dueAt?: Date | null;
  estimateLaborHours?: number | null;
  estimateCost?: number | null;
  assignedToId?: string | null;
}

/**
 * Creates a work order inside the caller's transaction and records workorder.created. Used by the work
 * orders API and by tool check-ins and reports. References must already be checked by the caller.
 */
export async function insertWorkOrder(tx: Tx, ctx: RequestContext, input: NewWorkOrder): Promise<WorkOrder> {
  const number = await allocateWorkOrderNumber(tx, ctx.orgId);
  const wo = await tx.workOrder.create({
    data: {
      orgId: ctx.orgId, number, title: input.title ?? `Work order #${number}`, description: input.description ?? null,
      status: input.status ?? 'OPEN', priority: input.priority ?? 'NORMAL', assetId: input.assetId ?? null,
      projectId: input.projectId ?? null, flagId: input.flagId ?? null, toolId: input.toolId ?? null,
      dueAt: input.dueAt ?? null, estimateLaborHours: input.estimateLaborHours ?? null,
      estimateCost: input.estimateCost ?? null, assignedToId: input.assignedToId ?? null,
      // createdById is required: system-created orders are attributed to the key's user when there is one.
      createdById: ctx.actorId ?? 'system',
      completedAt: input.status === 'DONE' ? new Date() : null,
    },
  });
  await emit(tx, ctx.orgId, 'workorder.created', {
    workOrderId: wo.id, number: wo.number, title: wo.title, status: wo.status, priority: wo.priority,
    assetId: wo.assetId, projectId: wo.projectId, flagId: wo.flagId, toolId: wo.toolId, assignedToId: wo.assignedToId,
    dueAt: wo.dueAt?.toISOString() ?? null, createdById: ctx.actorId, createdAt: wo.createdAt.toISOString(),
  });
  return wo;
}
