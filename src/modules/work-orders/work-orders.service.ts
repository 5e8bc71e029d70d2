import type { Prisma, WorkOrderPriority, WorkOrderStatus } from '../../generated/prisma/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { assertReferences } from '../shared/references.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { recordCompletion } from './work-order-completion.operations.ts';
import { assertStatusMove } from './work-orders.rules.ts';
import { listWorkOrders, lockOwnedWorkOrder, queueKey, repairTotals } from './work-orders.repository.ts';
import { paginate } from '../../core/pagination.ts';
import { insertWorkOrder, insertWorkOrderAlone } from './work-orders.operations.ts';
import { createKeyedQueue } from '../../core/keyed-queue.ts';
import { linkedReminderIds, linkReminders } from './work-order-reminders.operations.ts';
import { costsOf, laborLinesOf, partLinesOf } from './work-order-lines.repository.ts';
import { laborLineWire, partLineWire } from './work-order-lines.schemas.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import {
  toWorkOrderRow,
  WORK_ORDER_PRIORITIES,
  WORK_ORDER_STATUSES,
  type CreateWorkOrderInput,
  type ListWorkOrdersFilter,
  type UpdateWorkOrderInput,
} from './work-orders.schemas.ts';

const PATCHABLE = [
  'title',
  'description',
  'status',
  'priority',
  'assignedToId',
  'assetId',
  'projectId',
  'flagId',
  'dueAt',
  'estimateLaborHours',
  'estimateCost',
] as const;

/** Spec: unknown enum values in a work-order PATCH are silently dropped (as if the field were omitted). */
function knownOrDropped<T extends string>(value: string | null | undefined, values: readonly T[]): T | undefined {
  if (typeof value !== 'string') return undefined;
  const upper = value.trim().toUpperCase();
  return (values as readonly string[]).includes(upper) ? (upper as T) : undefined;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
  return a === b;
}

export function createWorkOrderService({ db }: Pick<ServiceDeps, 'db'>) {
  // Per organisation, this process has at most two numbering statements at the database: one holding the number
  // lock and the next waiting for it (work-orders.operations.ts).
  const numbering = createKeyedQueue(2);
  /** A flag link implies its asset: the asset defaults to the flag's and may not contradict it. */
  async function assetForFlag(
    tx: Prisma.TransactionClient,
    ctx: RequestContext,
    flagId: string | null | undefined,
    assetId: string | null | undefined,
  ) {
    if (!flagId) return assetId;
    const flag = await tx.flag.findFirst({ where: { id: flagId, orgId: ctx.orgId }, select: { assetId: true } });
    if (!flag) return assetId;
    if (assetId === undefined) return flag.assetId;
    if (assetId !== null && assetId !== flag.assetId)
      throw new ValidationError({ assetId: 'does not match the asset of the linked flag' });
    return assetId;
  }

  return {
    async list(ctx: RequestContext, query: ListWorkOrdersFilter) {
      const rows = await listWorkOrders(db.sql, ctx.orgId, query);
      const { page, nextCursor } = paginate(rows, query.limit, queueKey);
      return { ok: true as const, workOrders: page.map(toWorkOrderRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreateWorkOrderInput) {
      // Everything but the numbering statement happens before it, outside the lock: the reference checks
      // and the flag's asset are reads (the foreign keys still guard the insert).
      await assertReferences(db.prisma, ctx.orgId, [
        { field: 'flagId', kind: 'flag', id: input.flagId },
        { field: 'assetId', kind: 'asset', id: input.assetId },
        { field: 'projectId', kind: 'project', id: input.projectId },
        { field: 'assignedToId', kind: 'user', id: input.assignedToId },
      ]);
      const assetId = await assetForFlag(db.prisma, ctx, input.flagId, input.assetId);
      // Created as DONE (spec: created with the given status): completed at once, with its event, in one
      // transaction. Otherwise the one statement is its own transaction and holds the number lock alone.
      // Covering service reminders also takes the transaction (the links are written with the order).
      const reminderIds = input.serviceReminderIds ?? [];
      const wo =
        input.status === 'DONE' || reminderIds.length > 0
          ? await transaction(db, async (tx) => {
              const created = await insertWorkOrder(tx, ctx, { ...input, assetId });
              if (reminderIds.length > 0) await linkReminders(tx, ctx, created.id, created.assetId, reminderIds);
              if (created.status === 'DONE') await recordCompletion(tx, ctx, created);
              return created;
            })
          : await insertWorkOrderAlone(db.sql, numbering, ctx, { ...input, assetId });
      return { ok: true as const, workOrderId: wo.id, number: wo.number };
    },

    async get(ctx: RequestContext, id: string) {
      const wo = await db.prisma.workOrder.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!wo) throw notFound('Work order');
      const [repairSummary, serviceReminderIds, parts, labor, currency] = await Promise.all([
        repairTotals(db.prisma, ctx.orgId, wo.id),
        linkedReminderIds(db.prisma, wo.id),
        partLinesOf(db.prisma, ctx.orgId, wo.id),
        laborLinesOf(db.prisma, ctx.orgId, wo.id),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      return {
        ok: true as const,
        currency,
        workOrder: {
          ...toWorkOrderRow(wo),
          repairSummary,
          serviceReminderIds,
          parts: parts.map(partLineWire),
          labor: labor.map(laborLineWire),
          costs: costsOf(parts, labor),
        },
      };
    },

    async update(ctx: RequestContext, id: string, body: UpdateWorkOrderInput) {
      const patch = {
        ...body,
        status: knownOrDropped<WorkOrderStatus>(body.status, WORK_ORDER_STATUSES),
        priority: knownOrDropped<WorkOrderPriority>(body.priority, WORK_ORDER_PRIORITIES),
      };
      // Emptiness is judged on what was sent: a body whose only field is an unknown enum value is a
      // valid no-op (dropped, not rejected), while a body naming no field at all is a client mistake.
      if (!PATCHABLE.some((f) => body[f] !== undefined) && body.serviceReminderIds === undefined) {
        throw new ValidationError(
          { body: `send at least one of: ${[...PATCHABLE, 'serviceReminderIds'].join(', ')}` },
          'The patch is empty',
        );
      }
      await transaction(db, async (tx) => {
        const before = await lockOwnedWorkOrder(tx, ctx.orgId, id);
        if (patch.status) assertStatusMove(before.status, patch.status);
        await assertReferences(tx, ctx.orgId, [
          { field: 'assetId', kind: 'asset', id: patch.assetId },
          { field: 'projectId', kind: 'project', id: patch.projectId },
          { field: 'assignedToId', kind: 'user', id: patch.assignedToId },
          { field: 'flagId', kind: 'flag', id: patch.flagId },
        ]);
        if (patch.flagId || patch.assetId !== undefined) {
          // Linking a flag to an order without an asset adopts the flag's asset.
          const flagId = patch.flagId === undefined ? before.flagId : patch.flagId;
          const requested = patch.assetId !== undefined ? patch.assetId : (before.assetId ?? undefined);
          const assetId = await assetForFlag(tx, ctx, flagId, requested);
          if (assetId !== undefined) patch.assetId = assetId;
        }
        const data: Prisma.WorkOrderUncheckedUpdateInput = {};
        for (const field of PATCHABLE) {
          const value = patch[field];
          if (value !== undefined && !sameValue(before[field], value)) (data as Record<string, unknown>)[field] = value;
        }
        if (body.serviceReminderIds !== undefined) {
          const assetId = data.assetId !== undefined ? (data.assetId as string | null) : before.assetId;
          await linkReminders(tx, ctx, before.id, assetId, body.serviceReminderIds ?? []);
        }
        if (Object.keys(data).length === 0) return;
        const completing = data.status === 'DONE';
        if (completing) data.completedAt = new Date();
        const after = await tx.workOrder.update({ where: { id: before.id }, data });
        if (completing) await recordCompletion(tx, ctx, after);
      });
      return { ok: true as const, workOrderId: id };
    },
  };
}

export type WorkOrderService = ReturnType<typeof createWorkOrderService>;
