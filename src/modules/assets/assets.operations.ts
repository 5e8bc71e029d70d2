// Writes of an asset inside the caller's transaction, with their events: the assets API and imports share them.
import { setAssetRetired } from '../service-reminders/service-reminders.operations.ts';
import { randomUUID } from 'node:crypto';
import type { Asset } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emitMany } from '../../events/outbox.ts';
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
  return (await insertAssets(tx, ctx, [input]))[0]!;
}

/** Creates assets in one statement and records asset.created for each, in the order given. */
export async function insertAssets(tx: Tx, ctx: RequestContext, inputs: CreateAssetInput[]): Promise<Asset[]> {
  if (inputs.length === 0) return [];
  const data = inputs.map((input) => {
    const meterType = input.meterType ?? DEFAULT_METER[input.assetClass];
    return {
      id: randomUUID(),
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
    };
  });
  // RETURNING promises no order: the assets are given back in the order of the inputs.
  const byId = new Map((await tx.asset.createManyAndReturn({ data })).map((a) => [a.id, a]));
  const assets = data.map((d) => byId.get(d.id)!);
  await emitMany(
    tx,
    ctx.orgId,
    assets.map((asset, i) => ({
      type: 'asset.created' as const,
      data: {
        assetId: asset.id,
        nickname: asset.nickname,
        assetClass: inputs[i]!.assetClass,
        customerAssetNumber: asset.customerAssetNumber,
        meterType: asset.meterType,
        lifecycleStatus: asset.lifecycleStatus,
        actorId: ctx.actorId,
        createdAt: asset.createdAt.toISOString(),
      },
    })),
  );
  return assets;
}

/** The fields of the patch whose value differs from the asset's (what an update would change). */
export function changedAssetFields(before: Asset, patch: UpdateAssetInput): (typeof UPDATABLE_FIELDS)[number][] {
  return UPDATABLE_FIELDS.filter((f) => patch[f] !== undefined && !sameValue(before[f], patch[f]));
}

/** The columns a patch writes: the fields that change, and the date of a sale recorded without one. */
function patchColumns(before: Asset, patch: UpdateAssetInput, now: Date): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const field of changedAssetFields(before, patch)) data[field] = patch[field];
  // Marking an asset SOLD without a date records the sale as of now.
  if (
    patch.lifecycleStatus === 'SOLD' &&
    before.lifecycleStatus !== 'SOLD' &&
    patch.soldAt === undefined &&
    !before.soldAt
  )
    data.soldAt = now;
  return data;
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
  return (await applyAssetPatches(tx, ctx, [{ before, patch }]))[0]!;
}

const retired = (status: string) => status === 'ARCHIVED' || status === 'SOLD';

/** applyAssetPatch for several locked assets of the organisation, in one UPDATE and one event statement. */
export async function applyAssetPatches(
  tx: Tx,
  ctx: RequestContext,
  items: { before: Asset; patch: UpdateAssetInput }[],
): Promise<(Asset | null)[]> {
  const now = new Date();
  const writes = items
    .map(({ before, patch }) => ({ id: before.id, data: patchColumns(before, patch, now) }))
    .filter((w) => Object.keys(w.data).length > 0);
  if (writes.length === 0) return items.map(() => null);
  const columns = [...new Set(writes.flatMap((w) => Object.keys(w.data)))];
  // Each row sets the columns of its own patch (present keys, nulls included) from its JSON, typed by the table.
  await tx.$executeRawUnsafe(
    `UPDATE assets a SET ${columns.map((c) => `"${c}" = CASE WHEN d.data ? '${c}' THEN r."${c}" ELSE a."${c}" END`).join(', ')},
       "updatedAt" = $3::timestamptz
     FROM jsonb_to_recordset($2::jsonb) AS d(id text, data jsonb), LATERAL jsonb_populate_record(NULL::assets, d.data) AS r
     WHERE a."orgId" = $1 AND a.id = d.id`,
    ctx.orgId,
    JSON.stringify(writes),
    now,
  );
  const after = new Map(
    (await tx.asset.findMany({ where: { orgId: ctx.orgId, id: { in: writes.map((w) => w.id) } } })).map((a) => [
      a.id,
      a,
    ]),
  );
  const written = new Map(writes.map((w) => [w.id, w.data]));
  const events = [];
  for (const { before } of items) {
    const data = written.get(before.id);
    const asset = data && after.get(before.id);
    if (!data || !asset) continue;
    if (retired(before.lifecycleStatus) !== retired(asset.lifecycleStatus))
      await setAssetRetired(tx, ctx, asset.id, retired(asset.lifecycleStatus));
    events.push({
      type: 'asset.updated' as const,
      data: {
        assetId: asset.id,
        nickname: asset.nickname,
        changedFields: Object.keys(data),
        lifecycleStatus: asset.lifecycleStatus,
        actorId: ctx.actorId,
        updatedAt: asset.updatedAt.toISOString(),
      },
    });
  }
  await emitMany(tx, ctx.orgId, events);
  return items.map(({ before }) => (after.has(before.id) ? after.get(before.id)! : null));
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
  return replaceFuelCards(tx, orgId, [{ assetId, cards }]);
}

/**
 * setFuelCards for several assets in three statements: a card held by an asset other than the one it is given
 * to (or given to two of them) is 409 fuel_card_taken and nothing changes. True when a list changed.
 */
export async function replaceFuelCards(
  tx: Tx,
  orgId: string,
  lists: { assetId: string; cards: string[] }[],
): Promise<boolean> {
  if (lists.length === 0) return false;
  const wanted = lists.map((l) => ({ assetId: l.assetId, cards: [...new Set(l.cards)] }));
  const owner = new Map<string, string>();
  const twice: string[] = [];
  for (const l of wanted)
    for (const card of l.cards) {
      if (owner.has(card)) twice.push(card);
      owner.set(card, l.assetId);
    }
  const held = await tx.assetFuelCard.findMany({
    where: { orgId, cardNumber: { in: [...owner.keys()] } },
    select: { cardNumber: true, assetId: true },
  });
  const taken = [...twice, ...held.filter((h) => h.assetId !== owner.get(h.cardNumber)).map((h) => h.cardNumber)];
  if (taken.length > 0)
    throw new ApiError(409, 'fuel_card_taken', `Fuel card ${taken[0]!} is assigned to another asset`, {
      cardNumbers: taken,
    });
  const removed = await tx.assetFuelCard.deleteMany({
    where: { orgId, OR: wanted.map((l) => ({ assetId: l.assetId, cardNumber: { notIn: l.cards } })) },
  });
  const pairs = wanted.flatMap((l) => l.cards.map((cardNumber) => ({ orgId, assetId: l.assetId, cardNumber })));
  const added =
    pairs.length > 0 ? await tx.assetFuelCard.createMany({ data: pairs, skipDuplicates: true }) : { count: 0 };
  return removed.count + added.count > 0;
}
