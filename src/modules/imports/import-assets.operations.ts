// Assets imported: rows match assets by the `match` column; a row that matches none creates one (POST /assets, then
// the PATCH-only fields), a row that matches one changes what differs (PATCH /assets/{id}), through the assets
// module's own writes and events.
import type { z } from 'zod';
import { transaction } from '../../db/transaction.ts';
import { ApiError } from '../../core/errors.ts';
import { changedAssetFields } from '../assets/assets.operations.ts';
import { classFromDb, CreateAssetBody, UpdateAssetBody } from '../assets/assets.schemas.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import type { Decision, ImportHandler, PreparedRow } from './import-handler.operations.ts';
import {
  cardsDiffer,
  PATCH_FIELDS,
  patchOf,
  rollbackAssetRows,
  writeAssetRows,
} from './import-asset-writes.operations.ts';
import { assetsByMatch, existingIds, fuelCardsOf } from './import-lookups.repository.ts';
import { markWritten } from './imports.repository.ts';

const text = (name: string): FieldSpec => ({ name, kind: 'text' });
const num = (name: string): FieldSpec => ({ name, kind: 'number' });
const date = (name: string): FieldSpec => ({ name, kind: 'date' });

const FIELDS: FieldSpec[] = (
  [
    text('nickname'),
    text('assetClass'),
    text('customerAssetNumber'),
    text('vin'),
    text('serial'),
    { name: 'meterType', kind: 'upper' },
    text('yardId'),
    num('pmInterval'),
    num('pmBaselineReading'),
    text('licensePlate'),
    text('licenseState'),
    date('registrationExpiresAt'),
    date('insuranceExpiresAt'),
    num('purchaseCost'),
    date('purchaseDate'),
    { name: 'depreciationMethod', kind: 'upper' },
    { name: 'usefulLifeYears', kind: 'integer' },
    num('currentValue'),
    num('salvageValue'),
    { name: 'lifecycleStatus', kind: 'upper' },
    date('soldAt'),
    num('soldPrice'),
    text('soldTo'),
    text('parentAssetId'),
    text('primaryOperatorId'),
    { name: 'fuelCardNumbers', kind: 'list' },
  ] as FieldSpec[]
).map((f) => ({ ...f, clearable: (PATCH_FIELDS as readonly string[]).includes(f.name) }));

/** The first issue of a failed zod parse as a row error on its field. */
export function zodRowError(error: z.ZodError, values: Record<string, unknown>): RowError {
  const issue = error.issues[0]!;
  const field = issue.path.length > 0 ? String(issue.path[0]) : null;
  if (field && values[field] === null)
    return {
      code: 'not_clearable',
      column: field,
      value: null,
      message: `${field} cannot be cleared: it always has a value`,
    };
  const value = field && values[field] !== undefined ? String(values[field]) : null;
  return {
    code: value === null ? 'missing_value' : 'invalid_value',
    column: field,
    value,
    message: `${field ?? 'row'}: ${issue.message}`,
  };
}

const errorOf = (error: RowError): Decision => ({ action: 'error', targetId: null, key: null, error });

export const assetImport: ImportHandler = {
  scope: 'assets:write',
  fields: FIELDS,
  required: (s) => [[s.match]],
  writeOrder: '"rowNumber"',
  parallelBatches: 4,

  async resolve(db, ctx, rows, s) {
    const keys = rows.map((r) => r.values[s.match]).filter((k): k is string => typeof k === 'string');
    const matched = await assetsByMatch(db, ctx.orgId, s.match, keys);
    const refs = (field: string) => rows.map((r) => r.values[field]).filter((v): v is string => typeof v === 'string');
    const wantedCards = rows.flatMap((r) => (Array.isArray(r.values.fuelCardNumbers) ? r.values.fuelCardNumbers : []));
    const matchedIds = [...matched.values()].flat().map((a) => a.id);
    const [yards, assets, users, cards] = await Promise.all([
      existingIds(db.sql, 'yard', ctx.orgId, refs('yardId')),
      existingIds(db.sql, 'asset', ctx.orgId, refs('parentAssetId')),
      existingIds(db.sql, 'user', ctx.orgId, refs('primaryOperatorId')),
      fuelCardsOf(db.sql, ctx.orgId, wantedCards as string[], matchedIds),
    ]);
    const holder = new Map(cards.map((c) => [c.cardNumber, c.assetId]));
    const held = new Map<string, string[]>();
    for (const c of cards) held.set(c.assetId, [...(held.get(c.assetId) ?? []), c.cardNumber]);
    const unknownRef = (v: Record<string, unknown>): RowError | null => {
      for (const [field, known, kind] of [
        ['yardId', yards, 'yard'],
        ['parentAssetId', assets, 'asset'],
        ['primaryOperatorId', users, 'user'],
      ] as const) {
        const id = v[field];
        if (typeof id === 'string' && !known.has(id))
          return { code: 'unknown_reference', column: field, value: id, message: `no ${kind} with this id` };
      }
      return null;
    };
    return rows.map((row: PreparedRow): Decision => {
      const v = row.values;
      const key = v[s.match];
      if (typeof key !== 'string')
        return errorOf({
          code: 'missing_value',
          column: s.match,
          value: null,
          message: `${s.match} is required to match`,
        });
      const ref = unknownRef(v);
      if (ref) return errorOf(ref);
      const found = matched.get(key.toLowerCase()) ?? [];
      const matchKey = `${s.match}:${key.toLowerCase()}`;
      if (found.length > 1)
        return errorOf({
          code: 'ambiguous_match',
          column: s.match,
          value: key,
          message: `${found.length} assets have this ${s.match}`,
        });
      const asset = found[0];
      const patch = UpdateAssetBody.safeParse(patchOf(v, asset));
      if (!patch.success) return errorOf(zodRowError(patch.error, v));
      const taken = (patch.data.fuelCardNumbers ?? []).filter((c) => (holder.get(c) ?? asset?.id) !== asset?.id);
      if (taken.length > 0)
        return errorOf({
          code: 'fuel_card_taken',
          column: 'fuelCardNumbers',
          value: taken.join(' '),
          message: `fuel card ${taken[0]} is assigned to another asset`,
        });
      if (!asset) {
        const created = CreateAssetBody.safeParse({ ...v, assetClass: (v.assetClass as string)?.toLowerCase() });
        if (!created.success) return errorOf(zodRowError(created.error, v));
        return { action: 'create', targetId: null, key: matchKey, error: null };
      }
      if (typeof v.assetClass === 'string' && v.assetClass.toLowerCase() !== classFromDb(asset.assetClass))
        return errorOf({
          code: 'not_updatable',
          column: 'assetClass',
          value: v.assetClass,
          message: 'assetClass is set when the asset is created; it cannot be changed',
        });
      if (typeof v.meterType === 'string' && v.meterType !== asset.meterType)
        return errorOf({
          code: 'not_updatable',
          column: 'meterType',
          value: v.meterType,
          message: 'meterType is set when the asset is created; it cannot be changed',
        });
      if (v.parentAssetId === asset.id)
        return errorOf({
          code: 'invalid_value',
          column: 'parentAssetId',
          value: asset.id,
          message: 'an asset cannot be attached to itself',
        });
      const changed =
        changedAssetFields(asset, patch.data).length > 0 ||
        cardsDiffer(held.get(asset.id) ?? [], patch.data.fuelCardNumbers);
      return { action: changed ? 'update' : 'unchanged', targetId: asset.id, key: matchKey, error: null };
    });
  },

  async afterValidate(db, ctx, importId, header) {
    // A card is one asset's: a card that an earlier row of the file gives to its asset is taken for the later rows.
    await db.sql.query(
      `WITH cards AS (
         SELECT "rowNumber", jsonb_array_elements_text("values"->'fuelCardNumbers') AS card FROM import_rows
         WHERE "orgId" = $1 AND "importId" = $2 AND action <> 'error'
           AND jsonb_typeof("values"->'fuelCardNumbers') = 'array'
       ),
       firsts AS (SELECT card, min("rowNumber") AS first FROM cards GROUP BY card),
       later AS (
         SELECT c."rowNumber", min(c.card) AS card, min(f.first) AS first
         FROM cards c JOIN firsts f ON f.card = c.card AND c."rowNumber" > f.first GROUP BY c."rowNumber"
       )
       UPDATE import_rows i SET action = 'error', "errorCode" = 'fuel_card_taken', "errorColumn" = $3,
         "errorValue" = later.card,
         "errorMessage" = 'row ' || later.first || ' of the file assigns this fuel card already; a card is one asset''s'
       FROM later WHERE i."orgId" = $1 AND i."importId" = $2 AND i."rowNumber" = later."rowNumber"`,
      [ctx.orgId, importId, header('fuelCardNumbers')],
    );
  },

  async write({ db, billing }, ctx, importId, rows) {
    await transaction(db, async (tx) => {
      await markWritten(tx, ctx.orgId, importId, await writeAssetRows(tx, ctx, rows));
    });
    // As after POST /assets: the billing provider gets the new count of billable assets.
    if (rows.some((r) => r.action === 'create')) billing.schedule(ctx.orgId);
  },

  rollback: (tx, ctx, importId) => rollbackAssetRows(tx, ctx, importId, rowsChanged),
  afterRollback: ({ billing }, ctx) => billing.schedule(ctx.orgId),
};

export function rowsChanged(rows: number[]) {
  const shown = rows.slice(0, 20).join(', ');
  return new ApiError(
    409,
    'import_rows_changed',
    `Records written by the import changed since (rows ${shown}${rows.length > 20 ? ', …' : ''}); nothing was rolled back`,
    { rows },
  );
}
