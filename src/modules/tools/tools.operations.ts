// Writes of a tool inside the caller's transaction, with their audit events and webhooks: the tools API and
// imports share them.
import type { Prisma, Tool } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import type { Reference } from '../shared/references.ts';
import { auditText, newScanToken, recordToolEvent } from './tools.repository.ts';
import { UPDATABLE_FIELDS, type CreateToolInput, type UpdateToolInput } from './tools.schemas.ts';

const ASSIGNMENTS = [
  ['assignedUserId', 'user'],
  ['assignedVehicleId', 'vehicle'],
  ['assignedYardId', 'yard'],
  ['parentKitId', 'kit'],
] as const;

export function referencesOf(
  input: Partial<Pick<CreateToolInput, 'parentKitId' | 'assignedUserId' | 'assignedVehicleId' | 'assignedYardId'>>,
): Reference[] {
  return [
    { field: 'parentKitId', kind: 'tool', id: input.parentKitId },
    { field: 'assignedUserId', kind: 'user', id: input.assignedUserId },
    { field: 'assignedVehicleId', kind: 'asset', id: input.assignedVehicleId },
    { field: 'assignedYardId', kind: 'yard', id: input.assignedYardId },
  ];
}

/** Inserts a tool with its tool_created audit event (its oldest event) and tool.created. */
export async function insertTool(
  tx: Tx,
  ctx: RequestContext,
  input: CreateToolInput,
  actorId: string | null,
): Promise<Tool> {
  const isConsumable = input.isConsumable ?? false;
  const tool = await tx.tool.create({
    data: {
      orgId: ctx.orgId,
      name: input.name,
      category: input.category ?? null,
      makeModel: input.makeModel ?? null,
      serial: input.serial ?? null,
      purchaseDate: input.purchaseDate ?? null,
      purchaseCost: input.purchaseCost ?? null,
      supplier: input.supplier ?? null,
      warrantyEndDate: input.warrantyEndDate ?? null,
      isConsumable,
      stockLevel: isConsumable ? (input.stockLevel ?? null) : null,
      minStockLevel: input.minStockLevel ?? null,
      notes: input.notes ?? null,
      parentKitId: input.parentKitId ?? null,
      assignedUserId: input.assignedUserId ?? null,
      assignedVehicleId: input.assignedVehicleId ?? null,
      assignedYardId: input.assignedYardId ?? null,
      pmIntervalDays: input.pmIntervalDays ?? null,
      scanToken: newScanToken(),
    },
  });
  await recordToolEvent(tx, ctx, tool.id, {
    kind: 'AUDIT',
    actorId,
    createdAt: tool.createdAt,
    description: auditText('tool_created', [
      ['name', tool.name],
      ['category', tool.category],
      ['consumable', isConsumable ? 'true' : null],
    ]),
  });
  await emit(tx, ctx.orgId, 'tool.created', {
    toolId: tool.id,
    name: tool.name,
    category: tool.category,
    isConsumable,
    scanToken: tool.scanToken,
    purchaseCost: tool.purchaseCost,
    actorId,
    at: tool.createdAt.toISOString(),
  });
  return tool;
}

/** The fields of the patch whose value differs from the tool's. */
export function changedToolFields(before: Tool, patch: UpdateToolInput) {
  return UPDATABLE_FIELDS.filter((f) => patch[f] !== undefined && !sameValue(before[f], patch[f]));
}

/**
 * Applies a patch to a tool the caller locked (lockOwnedTool) and checked (references, kit cycles): the fields that
 * change, the audit events of a status or assignment change, tool.assignment_changed. The tool after, or null.
 */
export async function applyToolPatch(tx: Tx, ctx: RequestContext, before: Tool, patch: UpdateToolInput) {
  const fields = UPDATABLE_FIELDS.filter((f) => patch[f] !== undefined);
  const id = before.id;
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    if (!sameValue(before[field], patch[field])) data[field] = patch[field];
  }
  // Stock is tracked for consumables only: it is dropped when the tool is (or becomes) a plain tool.
  const consumable = (data.isConsumable as boolean | undefined) ?? before.isConsumable;
  if (!consumable) {
    if (before.stockLevel !== null) data.stockLevel = null;
    else delete data.stockLevel;
  }
  if (Object.keys(data).length === 0) return null;
  const after = await tx.tool.update({ where: { id }, data: data as Prisma.ToolUncheckedUpdateInput });
  const at = new Date();
  if (after.status !== before.status) {
    await recordToolEvent(tx, ctx, id, {
      kind: 'AUDIT',
      description: auditText('status_changed', [
        ['from', before.status],
        ['to', after.status],
      ]),
    });
  }
  const changes = ASSIGNMENTS.filter(([field]) => before[field] !== after[field]).map(([field, type]) => ({
    type,
    from: before[field],
    to: after[field],
  }));
  for (const c of changes) {
    await recordToolEvent(tx, ctx, id, {
      kind: 'ASSIGNMENT',
      description: auditText('assignment_changed', [
        ['type', c.type],
        ['from', c.from ?? 'none'],
        ['to', c.to ?? 'none'],
      ]),
    });
  }
  if (changes.length > 0) {
    await emit(tx, ctx.orgId, 'tool.assignment_changed', {
      toolId: id,
      name: after.name,
      changes,
      actorId: ctx.actorId,
      at: at.toISOString(),
    });
  }
  return after;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
  return a === b;
}
