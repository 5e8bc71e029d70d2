import { randomUUID } from 'node:crypto';
import type { WorkOrder, WorkOrderPriority, WorkOrderStatus } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';

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
 * orders API and by tool check-ins and reports. References must already be checked by the caller, and
 * callers call this last: the organisation's number lock is then held from this statement to the commit.
 */
export async function insertWorkOrder(tx: Tx, ctx: RequestContext, input: NewWorkOrder): Promise<WorkOrder> {
  const wo = await numberAndInsert(tx, ctx, input);
  await emit(tx, ctx.orgId, 'workorder.created', {
    workOrderId: wo.id, number: wo.number, title: wo.title, status: wo.status, priority: wo.priority,
    assetId: wo.assetId, projectId: wo.projectId, flagId: wo.flagId, toolId: wo.toolId, assignedToId: wo.assignedToId,
    dueAt: wo.dueAt?.toISOString() ?? null, createdById: ctx.actorId, createdAt: wo.createdAt.toISOString(),
  });
  return wo;
}

/**
 * Numbers and inserts the work order in one statement. The organisation row's lock (the UPDATE) is what
 * makes numbers unique and gap-free (a rolled-back transaction rolls back its increment too); taking it in
 * the same statement as the insert, instead of a conversation of round trips, keeps concurrent creates
 * from queueing behind an idle transaction.
 */
async function numberAndInsert(tx: Tx, ctx: RequestContext, input: NewWorkOrder): Promise<WorkOrder> {
  const status = input.status ?? 'OPEN';
  const rows = await tx.$queryRaw<WorkOrder[]>`
    WITH seq AS (
      UPDATE organizations SET "workOrderSeq" = "workOrderSeq" + 1 WHERE id = ${ctx.orgId} RETURNING "workOrderSeq" AS n
    )
    INSERT INTO work_orders (id, "orgId", number, title, description, status, priority, "assetId", "projectId", "flagId",
      "toolId", "dueAt", "estimateLaborHours", "estimateCost", "assignedToId", "createdById", "completedAt", "createdAt", "updatedAt")
    SELECT ${randomUUID()}, ${ctx.orgId}, seq.n, COALESCE(${input.title ?? null}::text, 'Work order #' || seq.n),
      ${input.description ?? null}::text, ${status}::"WorkOrderStatus", ${input.priority ?? 'NORMAL'}::"WorkOrderPriority",
      ${input.assetId ?? null}::text, ${input.projectId ?? null}::text, ${input.flagId ?? null}::text, ${input.toolId ?? null}::text,
      ${input.dueAt ?? null}::timestamptz, ${input.estimateLaborHours ?? null}::float8, ${input.estimateCost ?? null}::float8,
      ${input.assignedToId ?? null}::text,
      ${ctx.actorId ?? 'system'}, ${status === 'DONE' ? new Date() : null}::timestamptz, now(), now()
    FROM seq
    RETURNING *`;
  if (rows.length !== 1) throw new Error(`organisation ${ctx.orgId} not found while numbering a work order`);
  return rows[0];
}
