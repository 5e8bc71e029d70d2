// Assets imported: rows match assets by the `match` column; a row that matches none creates one (POST /assets, then
// the PATCH-only fields), a row that matches one changes what differs (PATCH /assets/{id}), through the assets
// module's own writes and events.
import type { z } from 'zod';
import { transaction } from '../../db/transaction.ts';
import type { Asset } from '../../generated/prisma/client.ts';
import { ApiError } from '../../core/errors.ts';
import { lockOwnedAsset } from '../assets/assets.repository.ts';
import { applyAssetPatch, changedAssetFields, insertAsset } from '../assets/assets.operations.ts';
import { classFromDb, CreateAssetBody, UpdateAssetBody, UPDATABLE_FIELDS } from '../assets/assets.schemas.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import {
  PredictionMismatch,
  type Decision,
  type ImportHandler,
  type PreparedRow,
  type Written,
} from './import-handler.operations.ts';
import { assetsByMatch, existingIds } from './import-lookups.repository.ts';
import { markWritten, writtenRows } from './imports.repository.ts';
import { ASSET_MATCHES } from './imports.schemas.ts';

const text = (name: string): FieldSpec => ({ name, kind: 'text' });
const num = (name: string): FieldSpec => ({ name, kind: 'number' });
const date = (name: string): FieldSpec => ({ name, kind: 'date' });

const FIELDS: FieldSpec[] = [
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
];

/** The first issue of a failed zod parse as a row error on its field. */
export function zodRowError(error: z.ZodError, values: Record<string, unknown>): RowError {
  const issue = error.issues[0]!;
  const field = issue.path.length > 0 ? String(issue.path[0]) : null;
  const value = field && values[field] !== undefined ? String(values[field]) : null;
  return {
    code: value === null ? 'missing_value' : 'invalid_value',
    column: field,
    value,
    message: `${field ?? 'row'}: ${issue.message}`,
  };
}

const errorOf = (error: RowError): Decision => ({ action: 'error', targetId: null, key: null, error });

/** The row's patch; an identifier that matches the asset's without case keeps the asset's spelling. */
function patchOf(values: Record<string, unknown>, before?: Asset) {
  const patch: Record<string, unknown> = {};
  for (const f of UPDATABLE_FIELDS) if (values[f] !== undefined) patch[f] = values[f];
  for (const f of ASSET_MATCHES) {
    const was = before?.[f];
    const now = patch[f];
    if (typeof was === 'string' && typeof now === 'string' && was.toLowerCase() === now.toLowerCase()) delete patch[f];
  }
  return patch;
}

/** Wire form of an asset's fields before an update, for rollback (dates as ISO text, decimals as numbers). */
function priorOf(asset: Asset, fields: readonly string[]) {
  const prior: Record<string, unknown> = {};
  for (const f of fields) {
    const v = (asset as Record<string, unknown>)[f];
    prior[f] = v instanceof Date ? v.toISOString() : v !== null && typeof v === 'object' ? Number(String(v)) : v;
  }
  return prior;
}

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
    const [yards, assets, users] = await Promise.all([
      existingIds(db.sql, 'yard', ctx.orgId, refs('yardId')),
      existingIds(db.sql, 'asset', ctx.orgId, refs('parentAssetId')),
      existingIds(db.sql, 'user', ctx.orgId, refs('primaryOperatorId')),
    ]);
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
      const changed = changedAssetFields(asset, patch.data);
      return { action: changed.length > 0 ? 'update' : 'unchanged', targetId: asset.id, key: matchKey, error: null };
    });
  },

  async write({ db }, ctx, importId, rows) {
    await transaction(db, async (tx) => {
      const written: Written[] = [];
      for (const row of rows) {
        const v = row.values;
        if (row.action === 'create') {
          // The PATCH-only fields (licensePlate, purchaseCost, …): what POST /assets already set is not patched again.
          const patch = UpdateAssetBody.parse(
            Object.fromEntries(Object.entries(patchOf(v)).filter(([f]) => !(f in CreateAssetBody.shape))),
          );
          const input = CreateAssetBody.parse({ ...v, assetClass: (v.assetClass as string).toLowerCase() });
          const asset = await insertAsset(tx, ctx, input);
          const after = (await applyAssetPatch(tx, ctx, asset, patch)) ?? asset;
          written.push({
            rowNumber: row.rowNumber,
            resultId: asset.id,
            prior: null,
            writtenUpdatedAt: after.updatedAt,
          });
          continue;
        }
        const before = await lockOwnedAsset(tx, ctx.orgId, row.targetId!);
        if (!before) throw new PredictionMismatch(row.rowNumber, 'the asset it updates was deleted');
        const patch = UpdateAssetBody.parse(patchOf(v, before));
        const changed = changedAssetFields(before, patch);
        if (changed.length === 0) throw new PredictionMismatch(row.rowNumber, 'the asset already holds these values');
        const after = await applyAssetPatch(tx, ctx, before, patch);
        written.push({
          rowNumber: row.rowNumber,
          resultId: before.id,
          prior: priorOf(before, changed),
          writtenUpdatedAt: after?.updatedAt ?? before.updatedAt,
        });
      }
      await markWritten(tx, ctx.orgId, importId, written);
    });
  },

  async rollback(tx, ctx, importId) {
    const rows = await writtenRows(tx, ctx.orgId, importId);
    const changed: number[] = [];
    const locked = new Map<string, Asset>();
    for (const row of rows) {
      const asset = await lockOwnedAsset(tx, ctx.orgId, row.resultId);
      if (!asset || asset.updatedAt.getTime() !== row.writtenUpdatedAt?.getTime()) changed.push(row.rowNumber);
      else locked.set(row.resultId, asset);
    }
    if (changed.length > 0) throw rowsChanged(changed);
    for (const row of rows) {
      const asset = locked.get(row.resultId)!;
      if (row.action === 'create') {
        await tx.asset.delete({ where: { id: asset.id } });
        continue;
      }
      const prior = UpdateAssetBody.parse(row.prior ?? {});
      await applyAssetPatch(tx, ctx, asset, prior);
    }
  },
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
