// The common shape of imported records that match by a key column, create when nothing matches and change what
// differs otherwise (vendors, tools): each type gives its lookups and the writes of its own module.
import type { z } from 'zod';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { Database } from '../../db/database.ts';
import type { RequestContext, Scope } from '../../core/context.ts';
import { priorOf, type FieldSpec, type RowError, type Settings } from './import-fields.rules.ts';
import { ValidationError } from '../../core/errors.ts';
import {
  PredictionMismatch,
  type Decision,
  type ImportHandler,
  type PreparedRow,
  type StoredRow,
  type Written,
} from './import-handler.operations.ts';
import { rowsChanged, zodRowError } from './import-assets.operations.ts';
import { existingIds, type ReferenceTable } from './import-lookups.repository.ts';
import { markWritten, writtenRows } from './imports.repository.ts';

export interface Keyed<R> {
  record: R;
  /** `${field}:${lower-case value}` */
  key: string;
}

export interface RecordSpec<R extends { id: string; updatedAt: Date }, C, U> {
  scope: Scope;
  fields: FieldSpec[];
  /** Columns that can identify a record, in order of preference: the row's first non-empty one is its key. */
  keyFields: string[];
  find(db: Database, orgId: string, keys: { field: string; value: string }[]): Promise<Keyed<R>[]>;
  references?: [field: string, table: ReferenceTable][];
  /** Settles values from other rows' lookups (a yard by name), one query per batch; errors by row number. */
  prepare?(db: Database, ctx: RequestContext, rows: PreparedRow[], s: Settings): Promise<Map<number, RowError>>;
  /** A row that is read but not imported (`unchanged`, with this code), or null. */
  skip?(values: Record<string, unknown>, s: Settings): RowError | null;
  /** A rule of the row's values alone, or null. */
  check?(values: Record<string, unknown>): RowError | null;
  create: z.ZodType<C>;
  update: z.ZodType<U>;
  updatable: readonly string[];
  changed(before: R, patch: U): string[];
  /** A reason the record cannot be updated by the row's patch, or null. */
  frozen?(before: R, patch: U): string | null;
  insert(tx: Tx, ctx: RequestContext, input: C): Promise<R | null>;
  lock(tx: Tx, orgId: string, id: string): Promise<R | null>;
  apply(tx: Tx, ctx: RequestContext, before: R, patch: U): Promise<R | null>;
  remove(tx: Tx, orgId: string, id: string): Promise<void>;
}

const errorOf = (error: RowError): Decision => ({ action: 'error', targetId: null, key: null, error });

function pick(values: Record<string, unknown>, fields: readonly string[]) {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (values[f] !== undefined) out[f] = values[f];
  return out;
}

export function recordImport<R extends { id: string; updatedAt: Date }, C, U>(
  spec: RecordSpec<R, C, U>,
): ImportHandler {
  const keyOf = (v: Record<string, unknown>) => {
    for (const field of spec.keyFields) {
      const value = v[field];
      if (typeof value === 'string' && value !== '') return { field, value };
    }
    return null;
  };
  /** The row's patch; a key column that matched without case keeps the record's spelling. */
  const patchOf = (v: Record<string, unknown>, before: R | undefined) => {
    const patch = pick(v, spec.updatable);
    for (const field of spec.keyFields) {
      const was = before && (before as Record<string, unknown>)[field];
      const now = patch[field];
      if (typeof was === 'string' && typeof now === 'string' && was.toLowerCase() === now.toLowerCase())
        delete patch[field];
    }
    return patch;
  };
  return {
    scope: spec.scope,
    fields: spec.fields.map((f) => ({ ...f, clearable: spec.updatable.includes(f.name) })),
    required: () => [spec.keyFields],
    writeOrder: '"rowNumber"',
    parallelBatches: 4,

    async resolve(db, ctx, rows, s) {
      const prepared = (await spec.prepare?.(db, ctx, rows, s)) ?? new Map<number, RowError>();
      const keys = rows.map((r) => keyOf(r.values)).filter((k) => k !== null);
      const found = await spec.find(db, ctx.orgId, keys);
      const byKey = new Map<string, R[]>();
      for (const f of found) byKey.set(f.key, [...(byKey.get(f.key) ?? []), f.record]);
      const known = new Map<string, Set<string>>();
      for (const [field, table] of spec.references ?? []) {
        const ids = rows.map((r) => r.values[field]).filter((v): v is string => typeof v === 'string');
        known.set(field, await existingIds(db.sql, table, ctx.orgId, ids));
      }
      return rows.map((row): Decision => {
        const v = row.values;
        const skipped = spec.skip?.(v, s);
        if (skipped) return { action: 'unchanged', targetId: null, key: null, error: skipped };
        const early = prepared.get(row.rowNumber) ?? spec.check?.(v);
        if (early) return errorOf(early);
        const k = keyOf(v);
        if (!k)
          return errorOf({
            code: 'missing_value',
            column: spec.keyFields[0]!,
            value: null,
            message: `${spec.keyFields.join(' or ')} is required to match`,
          });
        for (const [field, ids] of known) {
          const id = v[field];
          if (typeof id === 'string' && !ids.has(id))
            return errorOf({ code: 'unknown_reference', column: field, value: id, message: `no record with this id` });
        }
        const key = `${k.field}:${k.value.toLowerCase()}`;
        const matches = byKey.get(key) ?? [];
        if (matches.length > 1)
          return errorOf({
            code: 'ambiguous_match',
            column: k.field,
            value: k.value,
            message: `${matches.length} records match`,
          });
        const before = matches[0];
        const patch = spec.update.safeParse(patchOf(v, before));
        if (!patch.success) return errorOf(zodRowError(patch.error, v));
        if (!before) {
          const created = spec.create.safeParse(v);
          if (!created.success) return errorOf(zodRowError(created.error, v));
          return { action: 'create', targetId: null, key, error: null };
        }
        const changed = spec.changed(before, patch.data);
        if (changed.length === 0) return { action: 'unchanged', targetId: before.id, key, error: null };
        const frozen = spec.frozen?.(before, patch.data);
        if (frozen) return errorOf({ code: 'not_updatable', column: null, value: null, message: frozen });
        return { action: 'update', targetId: before.id, key, error: null };
      });
    },

    async write({ db }, ctx, importId, rows) {
      await transaction(db, async (tx) => {
        const written: Written[] = [];
        const writeRow = async (row: StoredRow) => {
          if (row.action === 'create') {
            const created = await spec.insert(tx, ctx, spec.create.parse(row.values));
            if (!created) throw new PredictionMismatch(row.rowNumber, 'a record with this key was created since');
            return { rowNumber: row.rowNumber, resultId: created.id, prior: null, writtenUpdatedAt: created.updatedAt };
          }
          const before = await spec.lock(tx, ctx.orgId, row.targetId!);
          if (!before) throw new PredictionMismatch(row.rowNumber, 'the record it updates was deleted');
          const patch = spec.update.parse(patchOf(row.values, before));
          const changed = spec.changed(before, patch);
          if (changed.length === 0)
            throw new PredictionMismatch(row.rowNumber, 'the record already holds these values');
          const after = await spec.apply(tx, ctx, before, patch);
          return {
            rowNumber: row.rowNumber,
            resultId: before.id,
            prior: priorOf(before, changed),
            writtenUpdatedAt: after?.updatedAt ?? before.updatedAt,
          };
        };
        for (const row of rows) {
          try {
            written.push(await writeRow(row));
          } catch (err) {
            // The module's own rules refused what validation accepted: the data changed in between.
            if (err instanceof ValidationError)
              throw new PredictionMismatch(row.rowNumber, Object.values(err.fieldErrors).join('; ') || err.message);
            throw err;
          }
        }
        await markWritten(tx, ctx.orgId, importId, written);
      });
    },

    async rollback(tx, ctx, importId) {
      const rows = await writtenRows(tx, ctx.orgId, importId);
      const changed: number[] = [];
      const locked = new Map<string, R>();
      for (const row of rows) {
        const record = await spec.lock(tx, ctx.orgId, row.resultId);
        if (!record || record.updatedAt.getTime() !== row.writtenUpdatedAt?.getTime()) changed.push(row.rowNumber);
        else locked.set(row.resultId, record);
      }
      if (changed.length > 0) throw rowsChanged(changed);
      for (const row of rows) {
        const record = locked.get(row.resultId)!;
        if (row.action === 'create') await spec.remove(tx, ctx.orgId, record.id);
        else await spec.apply(tx, ctx, record, spec.update.parse(row.prior ?? {}));
      }
    },
  };
}
