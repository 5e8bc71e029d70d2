// Writes of an asset inside the caller's transaction, with their events: the assets API and imports share them.
import { setAssetRetired } from '../service-reminders/service-reminders.operations.ts';
import type { Asset, Prisma } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { dec } from '../../core/money.ts';
import { ApiError } from '../../core/errors.ts';
import {
  classToDb,
  DEFAULT_METER,
  METER_UNIT,
  UPDATABLE_FIELDS,
  type CreateAssetInput,
  type UpdateAssetInput,
} from './assets.schemas.ts';

/** Creates the asset and records asset.created. */
export async function insertAsset(tx: Tx, ctx: RequestContext, input: CreateAssetInput): Promise<Asset> {
  const meterType = input.meterType ?? DEFAULT_METER[input.assetClass];
  const asset = await tx.asset.create({
    data: {
      orgId: ctx.orgId,
      nickname: input.nickname,
      assetClass: classToDb(input.assetClass),
      customerAssetNumber: input.customerAssetNumber ?? null,
      vin: input.vin ?? null,
      serial: input.serial ?? null,
      meterType,
      meterUnit: METER_UNIT[meterType],
      yardId: input.yardId ?? null,
      pmInterval: input.pmInterval ?? null,
      pmBaselineReading: input.pmBaselineReading ?? null,
    },
  });
  await emit(tx, ctx.orgId, 'asset.created', {
    assetId: asset.id,
    nickname: asset.nickname,
    assetClass: input.assetClass,
    customerAssetNumber: asset.customerAssetNumber,
    meterType: asset.meterType,
    lifecycleStatus: asset.lifecycleStatus,
    actorId: ctx.actorId,
    createdAt: asset.createdAt.toISOString(),
  });
  return asset;
}

/** The fields of the patch whose value differs from the asset's (what an update would change). */
export function changedAssetFields(before: Asset, patch: UpdateAssetInput): (typeof UPDATABLE_FIELDS)[number][] {
  return UPDATABLE_FIELDS.filter((f) => patch[f] !== undefined && !sameValue(before[f], patch[f]));
}

/**
 * Applies a patch to an asset the caller read under its lock (lockOwnedAsset): only the fields that change,
 * asset.updated naming them, the retirement of its reminders when it leaves service. Null when nothing changed.
 */
export async function applyAssetPatch(
  tx: Tx,
  ctx: RequestContext,
  before: Asset,
  patch: UpdateAssetInput,
): Promise<Asset | null> {
  const data: Prisma.AssetUncheckedUpdateInput = {};
  const changed: string[] = [];
  for (const field of changedAssetFields(before, patch)) {
    (data as Record<string, unknown>)[field] = patch[field];
    changed.push(field);
  }
  // Marking an asset SOLD without a date records the sale as of now.
  if (
    patch.lifecycleStatus === 'SOLD' &&
    before.lifecycleStatus !== 'SOLD' &&
    patch.soldAt === undefined &&
    !before.soldAt
  ) {
    data.soldAt = new Date();
    changed.push('soldAt');
  }
  if (changed.length === 0) return null;
  const after = await tx.asset.update({ where: { id: before.id }, data });
  const retired = (status: string) => status === 'ARCHIVED' || status === 'SOLD';
  if (retired(before.lifecycleStatus) !== retired(after.lifecycleStatus))
    await setAssetRetired(tx, ctx, after.id, retired(after.lifecycleStatus));
  await emit(tx, ctx.orgId, 'asset.updated', {
    assetId: after.id,
    nickname: after.nickname,
    changedFields: changed,
    lifecycleStatus: after.lifecycleStatus,
    actorId: ctx.actorId,
    updatedAt: after.updatedAt.toISOString(),
  });
  return after;
}

export function sameValue(a: unknown, b: unknown): boolean {
  // A numeric column (salvageValue) reads as a decimal: compared by value with the JSON number sent.
  if (typeof b === 'number' && a !== null && typeof a === 'object' && !(a instanceof Date)) return dec(a).eq(dec(b));
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
  }
  return a === b;
}

/**
 * Replaces the asset's fuel cards with `cards`; a card another asset of the organisation holds is 409
 * fuel_card_taken. True when the list changed.
 */
export async function setFuelCards(tx: Tx, orgId: string, assetId: string, cards: string[]): Promise<boolean> {
  const wanted = [...new Set(cards)];
  const taken = await tx.assetFuelCard.findMany({
    where: { orgId, cardNumber: { in: wanted }, NOT: { assetId } },
    select: { cardNumber: true },
  });
  if (taken.length > 0)
    throw new ApiError(409, 'fuel_card_taken', `Fuel card ${taken[0]!.cardNumber} is assigned to another asset`, {
      cardNumbers: taken.map((t) => t.cardNumber),
    });
  const removed = await tx.assetFuelCard.deleteMany({ where: { orgId, assetId, cardNumber: { notIn: wanted } } });
  const added = await tx.assetFuelCard.createMany({
    data: wanted.map((cardNumber) => ({ orgId, assetId, cardNumber })),
    skipDuplicates: true,
  });
  return removed.count + added.count > 0;
}
