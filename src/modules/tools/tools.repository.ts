import { randomBytes } from 'node:crypto';
import type { Tool, ToolEvent, ToolEventKind } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../http/context.ts';
import { notFound } from '../../http/errors.ts';

/** 24 random bytes: a label's token cannot be guessed or enumerated (192 bits). */
export const newScanToken = () => randomBytes(24).toString('base64url');

export async function findOwnedTool(tx: Tx, ctx: RequestContext, id: string): Promise<Tool> {
  const tool = await tx.tool.findFirst({ where: { id, orgId: ctx.orgId } });
  if (!tool) throw notFound('Tool');
  return tool;
}

/**
 * Locks the tool row until the transaction ends, so concurrent custody or stock changes on the same
 * tool run one after the other and each sees the previous one's result.
 */
export async function lockOwnedTool(tx: Tx, ctx: RequestContext, id: string): Promise<Tool> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "tools" WHERE "id" = ${id} AND "orgId" = ${ctx.orgId} FOR UPDATE`;
  if (locked.length === 0) throw notFound('Tool');
  return findOwnedTool(tx, ctx, id);
}

export interface NewToolEvent {
  kind: ToolEventKind;
  condition?: string | null;
  description?: string | null;
  cost?: number | null;
  linkedAssetId?: string | null;
  linkedWorkOrderId?: string | null;
  holderUserId?: string | null;
  holderVehicleId?: string | null;
  /** Defaults to the key's user; bulk paths pass null. */
  actorId?: string | null;
  createdAt?: Date;
}

export function recordToolEvent(tx: Tx, ctx: RequestContext, toolId: string, e: NewToolEvent): Promise<ToolEvent> {
  return tx.toolEvent.create({
    data: {
      orgId: ctx.orgId, toolId, kind: e.kind, condition: e.condition ?? null, description: e.description ?? null,
      cost: e.cost ?? null, linkedAssetId: e.linkedAssetId ?? null, linkedWorkOrderId: e.linkedWorkOrderId ?? null,
      holderUserId: e.holderUserId ?? null, holderVehicleId: e.holderVehicleId ?? null,
      actorId: e.actorId === undefined ? ctx.actorId : e.actorId,
      ...(e.createdAt ? { createdAt: e.createdAt } : {}),
    },
  });
}

/** Structured descriptions: `prefix: key=value key=value`, segments with no value left out. */
export function auditText(prefix: string, segments: [string, string | number | null | undefined][]): string {
  const body = segments.filter(([, v]) => v !== null && v !== undefined && v !== '').map(([k, v]) => `${k}=${v}`);
  return [`${prefix}:`, ...body].join(' ');
}

/** Walks up from `parentKitId`; true when `toolId` is among its ancestors (or is the parent itself). */
export async function wouldCycle(tx: Tx, orgId: string, toolId: string, parentKitId: string): Promise<boolean> {
  let current: string | null = parentKitId;
  for (let depth = 0; current && depth < 100; depth++) {
    if (current === toolId) return true;
    const parent: { parentKitId: string | null } | null = await tx.tool.findFirst({ where: { id: current, orgId }, select: { parentKitId: true } });
    current = parent?.parentKitId ?? null;
  }
  return false;
}
