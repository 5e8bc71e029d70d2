import type { Flag } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../http/context.ts';

/**
 * Resolves an OPEN or IN_PROGRESS flag inside the caller's transaction and records flag.resolved.
 * Resolving an AUTO_PM flag advances the asset's PM baseline to the reading that triggered it (or the
 * asset's latest reading), so the next service point moves one interval on.
 * Callers check the rules (RED needs a note and return-to-service confirmation); this only applies them.
 * Returns null when the flag was already resolved (no second event).
 */
export async function resolveFlag(
  tx: Tx,
  ctx: RequestContext,
  flag: Flag,
  input: { resolutionNote: string | null; returnToServiceConfirmed?: boolean; workOrderId?: string | null },
): Promise<Flag | null> {
  const now = new Date();
  // Conditional update: two concurrent resolutions cannot both succeed and emit twice.
  const { count } = await tx.flag.updateMany({
    where: { id: flag.id, orgId: ctx.orgId, status: { in: ['OPEN', 'IN_PROGRESS'] } },
    data: {
      status: 'RESOLVED', resolvedAt: now, resolvedById: ctx.actorId, resolutionNote: input.resolutionNote,
      returnToServiceConfirmed: input.returnToServiceConfirmed ?? false,
    },
  });
  if (count === 0) return null;
  if (flag.severity === 'AUTO_PM') {
    const asset = await tx.asset.findFirst({ where: { id: flag.assetId, orgId: ctx.orgId } });
    const baseline = flag.pmDueReading ?? asset?.lastMeterReading ?? null;
    if (asset && baseline !== null) await tx.asset.update({ where: { id: asset.id }, data: { pmBaselineReading: baseline } });
  }
  const actor = ctx.actorId ? await tx.user.findUnique({ where: { id: ctx.actorId }, select: { name: true } }) : null;
  await emit(tx, ctx.orgId, 'flag.resolved', {
    flagId: flag.id, assetId: flag.assetId, severity: flag.severity, resolutionNote: input.resolutionNote,
    resolvedBy: { userId: ctx.actorId, name: actor?.name ?? null }, resolvedAt: now.toISOString(),
    workOrderId: input.workOrderId ?? null,
  });
  return tx.flag.findUniqueOrThrow({ where: { id: flag.id } });
}
