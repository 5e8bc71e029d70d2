// The writes of an assets import, a batch of rows at a time, through the batch forms of the assets module's own
// writes (POST /assets, then PATCH /assets/{id} and its fuel cards): the same rules and events, a few statements per
// batch instead of a few per row.
import type { Asset } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ApiError } from '../../core/errors.ts';
import { lockOwnedAssets } from '../assets/assets.repository.ts';
import {
  applyAssetPatches,
  changedAssetFields,
  insertAssets,
  replaceFuelCards,
  sameValue,
} from '../assets/assets.operations.ts';
import { CreateAssetBody, UpdateAssetBody, UPDATABLE_FIELDS } from '../assets/assets.schemas.ts';
import { PredictionMismatch, type StoredRow, type Written } from './import-handler.operations.ts';
import { existingIdsIn } from './import-lookups.repository.ts';
import { priorOf } from './import-fields.rules.ts';
import { writtenRows } from './imports.repository.ts';
import { ASSET_MATCHES } from './imports.schemas.ts';

/** The fields a row may set on an asset: PATCH's, fuel cards included. */
export const PATCH_FIELDS = [...UPDATABLE_FIELDS, 'fuelCardNumbers'] as const;

/** The row's patch; an identifier that matches the asset's without case keeps the asset's spelling. */
export function patchOf(values: Record<string, unknown>, before?: Asset) {
  const patch: Record<string, unknown> = {};
  for (const f of PATCH_FIELDS) if (values[f] !== undefined) patch[f] = values[f];
  for (const f of ASSET_MATCHES) {
    const was = before?.[f];
    const now = patch[f];
    if (typeof was === 'string' && typeof now === 'string' && was.toLowerCase() === now.toLowerCase()) delete patch[f];
  }
  return patch;
}

/** Whether a list of cards differs from the asset's (undefined: the row leaves them as they are). */
export function cardsDiffer(held: readonly string[], wanted: readonly string[] | undefined): boolean {
  if (wanted === undefined) return false;
  const set = new Set(wanted);
  return set.size !== held.length || held.some((c) => !set.has(c));
}

const REFERENCES = [
  ['yardId', 'yard'],
  ['parentAssetId', 'asset'],
  ['primaryOperatorId', 'user'],
] as const;

/** The first row naming a record the organisation no longer has, checked in the transaction that writes. */
async function checkReferences(tx: Tx, orgId: string, rows: StoredRow[]) {
  for (const [field, kind] of REFERENCES) {
    const ids = rows.map((r) => r.values[field]).filter((v): v is string => typeof v === 'string');
    const known = await existingIdsIn(tx, kind, orgId, ids);
    const gone = rows.find((r) => typeof r.values[field] === 'string' && !known.has(r.values[field] as string));
    if (gone) throw new PredictionMismatch(gone.rowNumber, `the ${kind} of ${field} was deleted`);
  }
}

async function cardsHeld(tx: Tx, orgId: string, assetIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (assetIds.length === 0) return out;
  const rows = await tx.assetFuelCard.findMany({
    where: { orgId, assetId: { in: assetIds } },
    select: { assetId: true, cardNumber: true },
  });
  for (const r of rows) out.set(r.assetId, [...(out.get(r.assetId) ?? []), r.cardNumber]);
  return out;
}

/** The fields whose stored value a write changed: what rollback puts back. */
const changedBetween = (before: Asset, after: Asset) => UPDATABLE_FIELDS.filter((f) => !sameValue(before[f], after[f]));

/** Writes a batch of create and update rows in `tx`; what each wrote, for markWritten. */
export async function writeAssetRows(tx: Tx, ctx: RequestContext, rows: StoredRow[]): Promise<Written[]> {
  await checkReferences(tx, ctx.orgId, rows);
  const creates = rows.filter((r) => r.action === 'create');
  const updates = rows.filter((r) => r.action === 'update');

  const created = await insertAssets(
    tx,
    ctx,
    creates.map((r) =>
      CreateAssetBody.parse({ ...r.values, assetClass: (r.values.assetClass as string).toLowerCase() }),
    ),
  );
  // The PATCH-only fields (licensePlate, purchaseCost, …): what POST /assets already set is not patched again.
  const createPatches = creates.map((r) =>
    UpdateAssetBody.parse(
      Object.fromEntries(Object.entries(patchOf(r.values)).filter(([f]) => !(f in CreateAssetBody.shape))),
    ),
  );
  const createdAfter = await applyAssetPatches(
    tx,
    ctx,
    created.map((before, i) => ({ before, patch: createPatches[i]! })),
  );

  const locked = await lockOwnedAssets(
    tx,
    ctx.orgId,
    updates.map((r) => r.targetId!),
  );
  const held = await cardsHeld(tx, ctx.orgId, [...locked.keys()]);
  const updateItems = updates.map((row) => {
    const before = locked.get(row.targetId!);
    if (!before) throw new PredictionMismatch(row.rowNumber, 'the asset it updates was deleted');
    const patch = UpdateAssetBody.parse(patchOf(row.values, before));
    const cards = held.get(before.id) ?? [];
    const changed = changedAssetFields(before, patch).length > 0 || cardsDiffer(cards, patch.fuelCardNumbers);
    if (!changed) throw new PredictionMismatch(row.rowNumber, 'the asset already holds these values');
    return { row, before, patch, cards };
  });
  const updatedAfter = await applyAssetPatches(tx, ctx, updateItems);

  const lists = [
    ...creates.map((r, i) => ({ assetId: created[i]!.id, cards: createPatches[i]!.fuelCardNumbers, row: r })),
    ...updateItems.map((u) => ({ assetId: u.before.id, cards: u.patch.fuelCardNumbers, row: u.row })),
  ].filter((l): l is typeof l & { cards: string[] } => l.cards !== undefined);
  try {
    await replaceFuelCards(tx, ctx.orgId, lists);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'fuel_card_taken') throw err;
    const card = (err.extra as { cardNumbers: string[] }).cardNumbers[0]!;
    const row = lists.find((l) => l.cards.includes(card))!.row;
    throw new PredictionMismatch(row.rowNumber, `fuel card ${card} was assigned to another asset since`);
  }

  const written: Written[] = creates.map((row, i) => ({
    rowNumber: row.rowNumber,
    resultId: created[i]!.id,
    prior: null,
    writtenUpdatedAt: (createdAfter[i] ?? created[i]!).updatedAt,
  }));
  updateItems.forEach(({ row, before, patch, cards }, i) => {
    const after = updatedAfter[i] ?? before;
    const prior: Record<string, unknown> = priorOf(before, changedBetween(before, after));
    if (cardsDiffer(cards, patch.fuelCardNumbers)) {
      prior.fuelCardNumbers = cards;
      prior.writtenFuelCardNumbers = [...new Set(patch.fuelCardNumbers)];
    }
    written.push({ rowNumber: row.rowNumber, resultId: before.id, prior, writtenUpdatedAt: after.updatedAt });
  });
  return written;
}

/**
 * Undoes the import's written rows in `tx`: the assets it created are deleted, the ones it updated get their
 * prior values and fuel cards back. Throws `changed(rows)` when one of them changed since (nothing undone).
 */
export async function rollbackAssetRows(
  tx: Tx,
  ctx: RequestContext,
  importId: string,
  changedError: (rows: number[]) => Error,
) {
  const rows = await writtenRows(tx, ctx.orgId, importId);
  const locked = await lockOwnedAssets(
    tx,
    ctx.orgId,
    rows.map((r) => r.resultId),
  );
  const held = await cardsHeld(tx, ctx.orgId, [...locked.keys()]);
  const priors = new Map(rows.map((r) => [r.rowNumber, (r.prior ?? {}) as Record<string, unknown>]));
  const restoredCards = rows.flatMap((r) => (priors.get(r.rowNumber)!.fuelCardNumbers as string[] | undefined) ?? []);
  const holders = new Map(
    (
      await tx.assetFuelCard.findMany({
        where: { orgId: ctx.orgId, cardNumber: { in: restoredCards } },
        select: { cardNumber: true, assetId: true },
      })
    ).map((c) => [c.cardNumber, c.assetId]),
  );
  const changed = rows.filter((row) => {
    const asset = locked.get(row.resultId);
    if (!asset || asset.updatedAt.getTime() !== row.writtenUpdatedAt?.getTime()) return true;
    const prior = priors.get(row.rowNumber)!;
    const wrote = prior.writtenFuelCardNumbers as string[] | undefined;
    if (!wrote) return false;
    const back = (prior.fuelCardNumbers as string[]).some((c) => (holders.get(c) ?? asset.id) !== asset.id);
    return back || cardsDiffer(held.get(asset.id) ?? [], wrote);
  });
  if (changed.length > 0) throw changedError(changed.map((r) => r.rowNumber));
  const createdIds = rows.filter((r) => r.action === 'create').map((r) => r.resultId);
  if (createdIds.length > 0) await tx.asset.deleteMany({ where: { orgId: ctx.orgId, id: { in: createdIds } } });
  const updated = rows.filter((r) => r.action !== 'create');
  await applyAssetPatches(
    tx,
    ctx,
    updated.map((r) => ({ before: locked.get(r.resultId)!, patch: UpdateAssetBody.parse(priors.get(r.rowNumber)) })),
  );
  await replaceFuelCards(
    tx,
    ctx.orgId,
    updated
      .filter((r) => priors.get(r.rowNumber)!.writtenFuelCardNumbers)
      .map((r) => ({ assetId: r.resultId, cards: priors.get(r.rowNumber)!.fuelCardNumbers as string[] })),
  );
}
