// Putting an asset back in service after the inspection that took it out, from either side of the rule: the
// review (inspection-review.service.ts) and the resolution of a critical inspection flag (flags.operations.ts).
// Flags call in here, so this file imports nothing from the flags module.
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { emit } from '../../events/outbox.ts';

export interface ReleasableAsset {
  id: string;
  lifecycleStatus: string;
}

/**
 * The inspection holding the asset out of service: the latest one that took it out and has not released it. An
 * earlier one still marked as holding lost that role when the asset came back by hand and another inspection took
 * it out again.
 */
export async function holdingInspection(tx: Tx, orgId: string, assetId: string) {
  return tx.inspection.findFirst({
    where: { orgId, assetId, outOfServiceAt: { not: null }, returnedToServiceAt: null },
    orderBy: [{ outOfServiceAt: 'desc' }, { id: 'desc' }],
    select: { id: true, reviewedAt: true },
  });
}

/**
 * Whether an open RED flag opened by an inspection remains on the asset (it stays out of service). Flags that a
 * later inspection joined were opened by an inspection too: inspections only join flags keyed by their own items.
 */
export async function openCriticalInspectionFlag(tx: Tx, orgId: string, assetId: string): Promise<boolean> {
  const flag = await tx.flag.findFirst({
    where: {
      orgId,
      assetId,
      severity: 'RED',
      status: { in: ['OPEN', 'IN_PROGRESS'] },
      inspectionId: { not: null },
    },
    select: { id: true },
  });
  return flag !== null;
}

/**
 * Releases the asset (locked by the caller) when the inspection holding it out is reviewed and no critical
 * inspection defect stays open on it: the inspection records returnedToServiceAt, and an asset still
 * OUT_OF_SERVICE goes back IN_SERVICE with asset.updated. `only` restricts the release to that inspection (a
 * review releases for its own inspection only). Returns whether the asset went back in service.
 */
export async function releaseIfCleared(
  tx: Tx,
  ctx: RequestContext,
  asset: ReleasableAsset,
  reason: string,
  only: string | null = null,
): Promise<boolean> {
  const holder = await holdingInspection(tx, ctx.orgId, asset.id);
  if (!holder || !holder.reviewedAt || (only !== null && holder.id !== only)) return false;
  if (await openCriticalInspectionFlag(tx, ctx.orgId, asset.id)) return false;
  await tx.inspection.update({ where: { id: holder.id }, data: { returnedToServiceAt: new Date() } });
  if (asset.lifecycleStatus !== 'OUT_OF_SERVICE') return false;
  const after = await tx.asset.update({ where: { id: asset.id }, data: { lifecycleStatus: 'IN_SERVICE' } });
  await emit(tx, ctx.orgId, 'asset.updated', {
    assetId: after.id,
    nickname: after.nickname,
    changedFields: ['lifecycleStatus'],
    lifecycleStatus: after.lifecycleStatus,
    actorId: ctx.actorId,
    updatedAt: after.updatedAt.toISOString(),
    reason,
    inspectionId: holder.id,
  });
  return true;
}
