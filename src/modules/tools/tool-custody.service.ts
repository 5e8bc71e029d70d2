import type { Tool } from '../../generated/prisma/client.ts';
import { clampText } from '../../core/input-guard.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, ValidationError } from '../../core/errors.ts';
import { insertWorkOrder } from '../work-orders/work-orders.operations.ts';
import { assertReferences } from '../shared/references.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { lockOwnedTool, recordToolEvent } from './tools.repository.ts';
import { photoAttachment } from '../attachments/attachments.operations.ts';
import type { CheckinInput, CheckoutInput, ReportInput } from './tools.schemas.ts';

type SkipReason = 'retired' | 'missing' | 'already_checked_out';
interface Target {
  toUserId: string | null;
  toVehicleId: string | null;
  linkedAssetId: string | null;
  note: string | null;
  force: boolean;
}

/** Why this tool cannot go to `target`, or null when it can (or already has: see isSameCheckout). */
function blockerOf(tool: Tool, target: Target): SkipReason | null {
  if (tool.status === 'RETIRED') return 'retired';
  if (tool.status === 'MISSING') return 'missing';
  if (isCheckedOut(tool) && !isSameCheckout(tool, target) && !target.force) return 'already_checked_out';
  return null;
}

const isCheckedOut = (t: Tool) => t.checkedOutAt !== null;
/**
 * Spec rule 6: checkout is idempotent per (tool, target user). A repeat to the current holder succeeds and
 * changes nothing (use force to re-point it at another vehicle or asset). A user-less checkout (to a vehicle
 * only) is identified by its vehicle.
 */
const isSameCheckout = (t: Tool, target: Target) =>
  isCheckedOut(t) &&
  t.checkedOutToUserId === target.toUserId &&
  (target.toUserId !== null || t.checkedOutVehicleId === target.toVehicleId);

export function createToolCustody({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  const photoOf = async (tx: Tx, ctx: RequestContext, toolId: string, id: string | undefined) =>
    id
      ? (await photoAttachment(tx, ctx.orgId, { type: 'tool', id: toolId }, id, config.publicBaseUrl)).attachmentId
      : null;

  /** Checks out one locked tool that passed blockerOf; a repeat of the current checkout changes nothing. */
  async function checkoutOne(tx: Tx, ctx: RequestContext, tool: Tool, target: Target): Promise<string> {
    if (isSameCheckout(tool, target) && !target.force) {
      const open = await tx.toolEvent.findFirst({
        where: { toolId: tool.id, kind: 'CHECK_OUT' },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true },
      });
      if (open) return open.id;
    }
    const at = new Date();
    await tx.tool.update({
      where: { id: tool.id },
      data: {
        checkedOutToUserId: target.toUserId,
        checkedOutVehicleId: target.toVehicleId,
        checkedOutAssetId: target.linkedAssetId,
        checkedOutAt: at,
      },
    });
    const event = await recordToolEvent(tx, ctx, tool.id, {
      kind: 'CHECK_OUT',
      description: target.note,
      linkedAssetId: target.linkedAssetId,
      holderUserId: target.toUserId,
      holderVehicleId: target.toVehicleId,
      createdAt: at,
    });
    await emit(tx, ctx.orgId, 'tool.checked_out', {
      toolId: tool.id,
      name: tool.name,
      toUserId: target.toUserId,
      toVehicleId: target.toVehicleId,
      linkedAssetId: target.linkedAssetId,
      note: target.note,
      eventId: event.id,
      actorId: ctx.actorId,
      at: at.toISOString(),
    });
    return event.id;
  }

  return {
    async checkout(ctx: RequestContext, id: string, input: CheckoutInput) {
      return transaction(db, async (tx) => {
        const kit = await lockOwnedTool(tx, ctx, id);
        await assertReferences(tx, ctx.orgId, [
          { field: 'toUserId', kind: 'user', id: input.toUserId },
          { field: 'toVehicleId', kind: 'asset', id: input.toVehicleId },
          { field: 'linkedAssetId', kind: 'asset', id: input.linkedAssetId },
        ]);
        const toUserId = input.toUserId ?? (input.toVehicleId ? null : ctx.actorId);
        if (!toUserId && !input.toVehicleId) throw new ValidationError({ toUserId: 'send toUserId or toVehicleId' });
        const target: Target = {
          toUserId,
          toVehicleId: input.toVehicleId ?? null,
          linkedAssetId: input.linkedAssetId ?? null,
          note: input.note ?? null,
          force: input.force,
        };
        const blocker = blockerOf(kit, target);
        if (blocker === 'retired' || blocker === 'missing')
          throw conflict('tool_unavailable', `The tool is ${kit.status} and cannot be checked out`);
        if (blocker === 'already_checked_out') {
          throw conflict(
            'tool_checked_out',
            'The tool is checked out to someone else; send force: true to take it over',
            {
              checkedOutToUserId: kit.checkedOutToUserId,
              checkedOutVehicleId: kit.checkedOutVehicleId,
            },
          );
        }
        const eventId = await checkoutOne(tx, ctx, kit, target);
        if (!input.includeChildren) return { ok: true as const, toolId: kit.id, eventId };

        // Kit: every direct part is tried on its own; a part that cannot go is reported, never fatal.
        const succeeded = [{ id: kit.id, eventId }];
        const skipped: { id: string; reason: SkipReason }[] = [];
        const parts = await tx.tool.findMany({
          where: { orgId: ctx.orgId, parentKitId: kit.id },
          orderBy: [{ name: 'asc' }, { id: 'asc' }],
          select: { id: true },
        });
        for (const part of parts) {
          const child = await lockOwnedTool(tx, ctx, part.id);
          const reason = blockerOf(child, target);
          if (reason) skipped.push({ id: child.id, reason });
          else succeeded.push({ id: child.id, eventId: await checkoutOne(tx, ctx, child, target) });
        }
        return { ok: true as const, kitId: kit.id, succeeded, skipped };
      });
    },

    async checkin(ctx: RequestContext, id: string, input: CheckinInput) {
      return transaction(db, async (tx) => {
        const tool = await lockOwnedTool(tx, ctx, id);
        const photoId = await photoOf(tx, ctx, id, input.photoAttachmentId);
        const at = new Date();
        // Without a condition the tool only changes hands: its status stays as it is.
        const newStatus = input.condition ?? tool.status;
        const workOrder =
          input.condition === 'BROKEN'
            ? await insertWorkOrder(tx, ctx, {
                title: clampText(`Repair broken tool: ${tool.name}`, 200),
                description: input.note ?? 'Checked in BROKEN',
                priority: 'HIGH',
                toolId: tool.id,
              })
            : null;
        await tx.tool.update({
          where: { id },
          data: {
            status: newStatus,
            checkedOutToUserId: null,
            checkedOutVehicleId: null,
            checkedOutAssetId: null,
            checkedOutAt: null,
          },
        });
        const event = await recordToolEvent(tx, ctx, id, {
          kind: 'CHECK_IN',
          condition: input.condition ?? null,
          description: input.note,
          linkedWorkOrderId: workOrder?.id,
          holderUserId: tool.checkedOutToUserId,
          holderVehicleId: tool.checkedOutVehicleId,
          photoId,
          createdAt: at,
        });
        await emit(tx, ctx.orgId, 'tool.checked_in', {
          toolId: id,
          name: tool.name,
          condition: input.condition ?? null,
          newStatus,
          workOrderId: workOrder?.id ?? null,
          fromUserId: tool.checkedOutToUserId,
          eventId: event.id,
          actorId: ctx.actorId,
          at: at.toISOString(),
        });
        if (workOrder) {
          await emit(tx, ctx.orgId, 'tool.failure', {
            toolId: id,
            name: tool.name,
            kind: 'CHECK_IN',
            description: input.note ?? null,
            newStatus: 'BROKEN',
            workOrderId: workOrder.id,
            eventId: event.id,
            actorId: ctx.actorId,
            at: at.toISOString(),
          });
        }
        return { ok: true as const, toolId: id, eventId: event.id, workOrderId: workOrder?.id ?? null };
      });
    },

    /** A failure report or replacement request: the tool becomes BROKEN (or MISSING) and a work order is opened. */
    async report(ctx: RequestContext, id: string, input: ReportInput) {
      return transaction(db, async (tx) => {
        const tool = await lockOwnedTool(tx, ctx, id);
        const photoId = await photoOf(tx, ctx, id, input.photoAttachmentId);
        const newStatus = input.markMissing ? 'MISSING' : 'BROKEN';
        const at = new Date();
        const what = input.markMissing
          ? 'Missing tool'
          : input.kind === 'FAILURE_REPORT'
            ? 'Tool failure'
            : 'Replace tool';
        const workOrder = await insertWorkOrder(tx, ctx, {
          title: clampText(`${what}: ${tool.name}`, 200),
          description: input.description ?? null,
          priority: input.kind === 'FAILURE_REPORT' ? 'HIGH' : 'NORMAL',
          toolId: id,
          estimateCost: input.cost ?? null,
        });
        await tx.tool.update({ where: { id }, data: { status: newStatus } });
        const event = await recordToolEvent(tx, ctx, id, {
          kind: input.kind,
          condition: newStatus,
          description: input.description,
          cost: input.cost,
          linkedWorkOrderId: workOrder.id,
          photoId,
          createdAt: at,
        });
        // Spec: tool.failure is for a tool reported BROKEN; a tool reported MISSING is not a failure event.
        if (newStatus === 'BROKEN') {
          await emit(tx, ctx.orgId, 'tool.failure', {
            toolId: id,
            name: tool.name,
            kind: input.kind,
            description: input.description ?? null,
            newStatus,
            workOrderId: workOrder.id,
            eventId: event.id,
            actorId: ctx.actorId,
            at: at.toISOString(),
          });
        }
        return { ok: true as const, toolId: id, eventId: event.id, workOrderId: workOrder.id };
      });
    },
  };
}
