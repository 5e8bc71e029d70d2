// Flag rules shared by several services (flags, meter logs' AUTO_PM, work-order completion): each writes the
// flag and records its event in the caller's transaction. Queries alone live in flags.repository.ts.
import { randomUUID } from 'node:crypto';
import type { Flag, FlagSeverity } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit, emitMany } from '../../events/outbox.ts';
import { lockOwnedAsset } from '../assets/assets.repository.ts';
import type { RequestContext } from '../../core/context.ts';
import { queueFlagsNotifications } from '../notifications/notifications.repository.ts';
import { releaseIfCleared } from '../inspections/inspection-release.operations.ts';

/** raisedById of flags the system raises (AUTO_PM), and of flags raised by keys without a user. */
export const SYSTEM_ACTOR = 'system';

export interface NewFlag {
  asset: { id: string; nickname: string };
  severity: FlagSeverity;
  note?: string | null;
  photoUrl?: string | null;
  lat?: number | null;
  lng?: number | null;
  accuracyM?: number | null;
  pmDueReading?: number | null;
  /** True for AUTO_PM: the system raised it, whoever's reading triggered it. */
  bySystem?: boolean;
  /**
   * Names the repeated signal the flag stands for (a fault code, an inspection item): the database holds at
   * most one open flag per asset and key. Look for one first with findOpenFlagByKey under the asset lock.
   */
  dedupeKey?: string | null;
  /** The inspection whose failed item opened the flag. */
  inspectionId?: string | null;
}

/**
 * Creates a flag inside the caller's transaction, records flag.created and queues its push and email
 * notifications (PENDING rows the sender job delivers after commit). The caller checks the asset.
 */
export async function insertFlag(tx: Tx, ctx: RequestContext, input: NewFlag): Promise<Flag> {
  const [flag] = await insertFlags(tx, ctx, [input]);
  return flag;
}

/**
 * insertFlag for several flags raised together (the failed items of one inspection), in one statement per step;
 * returns the flags in the order of `inputs`.
 */
export async function insertFlags(tx: Tx, ctx: RequestContext, inputs: NewFlag[]): Promise<Flag[]> {
  if (inputs.length === 0) return [];
  const raisedByOf = (input: NewFlag) => (input.bySystem ? SYSTEM_ACTOR : (ctx.actorId ?? SYSTEM_ACTOR));
  const ids = inputs.map(() => randomUUID());
  const rows = await tx.flag.createManyAndReturn({
    data: inputs.map((input, i) => ({
      id: ids[i],
      orgId: ctx.orgId,
      assetId: input.asset.id,
      severity: input.severity,
      note: input.note ?? null,
      photoUrl: input.photoUrl ?? null,
      raisedById: raisedByOf(input),
      lat: input.lat ?? null,
      lng: input.lng ?? null,
      accuracyM: input.accuracyM ?? null,
      pmDueReading: input.pmDueReading ?? null,
      dedupeKey: input.dedupeKey ?? null,
      inspectionId: input.inspectionId ?? null,
    })),
  });
  const byId = new Map(rows.map((f) => [f.id, f]));
  const flags = ids.map((id) => byId.get(id)!);
  const byUser = inputs.some((input) => raisedByOf(input) !== SYSTEM_ACTOR);
  const user = byUser ? await tx.user.findUnique({ where: { id: ctx.actorId! }, select: { name: true } }) : null;
  const payloads = flags.map((flag, i) => ({
    flagId: flag.id,
    assetId: flag.assetId,
    assetNickname: inputs[i].asset.nickname,
    severity: flag.severity,
    reason: flag.note,
    photoUrl: flag.photoUrl,
    raisedBy:
      flag.raisedById === SYSTEM_ACTOR
        ? { userId: null, name: SYSTEM_ACTOR }
        : { userId: flag.raisedById, name: user?.name ?? null },
    raisedAt: flag.createdAt.toISOString(),
    pmDueReading: flag.pmDueReading,
  }));
  await emitMany(
    tx,
    ctx.orgId,
    payloads.map((data) => ({ type: 'flag.created' as const, data })),
  );
  await queueFlagsNotifications(tx, ctx.orgId, payloads);
  return flags;
}

/**
 * Resolves an OPEN or IN_PROGRESS flag inside the caller's transaction and records flag.resolved.
 * Resolving an AUTO_PM flag advances the asset's PM baseline to the reading that triggered it (or the
 * asset's latest reading), so the next service point moves one interval on.
 * Resolving the last open critical inspection flag on an asset returns it to service when the reviewed inspection
 * that took it out allows it, as the review itself would have.
 * Callers check the rules (RED needs a note and return-to-service confirmation); this only applies them.
 * Returns null when the flag was already resolved (no second event).
 */
export async function resolveFlag(
  tx: Tx,
  ctx: RequestContext,
  flag: Flag,
  input: { resolutionNote: string | null; returnToServiceConfirmed?: boolean; workOrderId?: string | null },
): Promise<Flag | null> {
  // AUTO_PM: take the asset lock first, as meter logs do, so a reading being logged right now sees either
  // the open flag with the old baseline or the resolved flag with the new one, never a mix. A critical
  // inspection flag takes it too: submissions and reviews hold it while they decide the asset's status.
  const autoPm = flag.severity === 'AUTO_PM';
  const critical = flag.severity === 'RED' && flag.inspectionId !== null;
  const asset = autoPm || critical ? await lockOwnedAsset(tx, ctx.orgId, flag.assetId) : null;
  const now = new Date();
  // Conditional update: two concurrent resolutions cannot both succeed and emit twice.
  const { count } = await tx.flag.updateMany({
    where: { id: flag.id, orgId: ctx.orgId, status: { in: ['OPEN', 'IN_PROGRESS'] } },
    data: {
      status: 'RESOLVED',
      resolvedAt: now,
      resolvedById: ctx.actorId,
      resolutionNote: input.resolutionNote,
      returnToServiceConfirmed: input.returnToServiceConfirmed ?? false,
    },
  });
  if (count === 0) return null;
  const baseline = asset && autoPm ? (flag.pmDueReading ?? asset.lastMeterReading) : null;
  if (asset && baseline !== null)
    await tx.asset.update({ where: { id: asset.id }, data: { pmBaselineReading: baseline } });
  const actor = ctx.actorId ? await tx.user.findUnique({ where: { id: ctx.actorId }, select: { name: true } }) : null;
  await emit(tx, ctx.orgId, 'flag.resolved', {
    flagId: flag.id,
    assetId: flag.assetId,
    severity: flag.severity,
    resolutionNote: input.resolutionNote,
    resolvedBy: { userId: ctx.actorId, name: actor?.name ?? null },
    resolvedAt: now.toISOString(),
    workOrderId: input.workOrderId ?? null,
  });
  if (asset && critical) await releaseIfCleared(tx, ctx, asset, 'Critical defects of the reviewed inspection resolved');
  return tx.flag.findUniqueOrThrow({ where: { id: flag.id } });
}
