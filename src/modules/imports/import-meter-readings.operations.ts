// Meter readings imported: each row names its asset (assetId, or the `match` column); the rows of an asset are written
// together through the hours service's batch path with source "import", which applies the rules of POST /hours to each
// in turn, so readings open AUTO_PM flags and move service reminders as any other.
import type { Database } from '../../db/database.ts';
import { CreateHoursBody, type CreateHoursInput } from '../hours/hours.schemas.ts';
import { BatchEntryError } from '../hours/hours-batch.operations.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import { PredictionMismatch, type Decision, type ImportHandler, type StoredRow } from './import-handler.operations.ts';
import { assetsById, assetsByMatch, existingIds } from './import-lookups.repository.ts';
import { zodRowError, rowsChanged } from './import-assets.operations.ts';
import { markWritten, writtenRows } from './imports.repository.ts';
import { ASSET_MATCHES } from './imports.schemas.ts';

const num = (name: string): FieldSpec => ({ name, kind: 'number' });
const text = (name: string): FieldSpec => ({ name, kind: 'text' });

const FIELDS: FieldSpec[] = [
  text('assetId'),
  ...ASSET_MATCHES.map(text),
  num('hoursReading'),
  text('state'),
  text('note'),
  { name: 'loggedAt', kind: 'date' },
  text('projectId'),
  text('loggedByDeviceId'),
  num('fuelVolume'),
  { name: 'fuelUnit', kind: 'upper' },
  num('fuelCostTotal'),
  num('lat'),
  num('lng'),
];
/** A reading may be stamped this far ahead of the server clock, as on POST /hours. */
const FUTURE_SKEW_MS = 5 * 60 * 1000;
/** Assets written at once during a commit, each in a transaction of its own with its readings in time order. */
const PARALLEL_ASSETS = 2;
/** Rows of a commit batch: a few assets' readings, each asset's written in a few statements. */
const WRITE_BATCH = 2_000;

interface Staged {
  assetId: string;
  at: string;
  input: CreateHoursInput;
  /** The asset's latest stored reading, when this one is older. */
  older: Date | null;
}

const errorOf = (error: RowError): Decision => ({ action: 'error', targetId: null, key: null, error });

/** The key of a reading's idempotency: a resumed commit finds the rows it already wrote. */
export const readingKey = (importId: string, rowNumber: number) => `import:${importId}:${rowNumber}`;

async function storedReadings(db: Database, orgId: string, pairs: { assetId: string; at: string }[]) {
  const found = new Map<string, number>();
  if (pairs.length === 0) return found;
  const rows = await db.sql.query<{ assetId: string; at: string; hoursReading: number }>(
    `SELECT m."assetId", to_char(m."loggedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, m."hoursReading"
     FROM meter_logs m JOIN unnest($2::text[], $3::timestamptz[]) AS p(a, t) ON m."assetId" = p.a AND m."loggedAt" = p.t
     WHERE m."orgId" = $1`,
    [orgId, pairs.map((p) => p.assetId), pairs.map((p) => p.at)],
  );
  for (const r of rows) found.set(`${r.assetId}|${r.at}`, Number(r.hoursReading));
  return found;
}

export const meterReadingImport: ImportHandler = {
  scope: 'hours:write',
  fields: FIELDS,
  required: (s) => [['assetId', s.match], ['loggedAt'], ['hoursReading', 'state']],
  // Asset by asset, each in time order: a batch holds the readings of a few assets, each asset's written together.
  writeOrder: `"targetId", ("values"->>'loggedAt'), "rowNumber"`,
  writeBatch: WRITE_BATCH,

  async resolve(db, ctx, rows, s) {
    const byMatch = await assetsByMatch(
      db,
      ctx.orgId,
      s.match,
      rows
        .filter((r) => typeof r.values.assetId !== 'string')
        .map((r) => r.values[s.match])
        .filter((k): k is string => typeof k === 'string'),
    );
    const byId = await assetsById(
      db,
      ctx.orgId,
      rows.map((r) => r.values.assetId).filter((k): k is string => typeof k === 'string'),
    );
    const projects = await existingIds(
      db.sql,
      'project',
      ctx.orgId,
      rows.map((r) => r.values.projectId).filter((k): k is string => typeof k === 'string'),
    );
    const now = Date.now();
    const staged: (Staged | Decision)[] = rows.map((row): Staged | Decision => {
      const v = row.values;
      let asset;
      if (typeof v.assetId === 'string') {
        asset = byId.get(v.assetId);
        if (!asset)
          return errorOf({
            code: 'unknown_asset',
            column: 'assetId',
            value: v.assetId,
            message: 'no asset with this id',
          });
      } else {
        const key = v[s.match];
        if (typeof key !== 'string')
          return errorOf({
            code: 'missing_value',
            column: s.match,
            value: null,
            message: `assetId or ${s.match} is required`,
          });
        const found = byMatch.get(key.toLowerCase()) ?? [];
        if (found.length !== 1)
          return errorOf({
            code: found.length === 0 ? 'unknown_asset' : 'ambiguous_match',
            column: s.match,
            value: key,
            message:
              found.length === 0 ? `no asset has this ${s.match}` : `${found.length} assets have this ${s.match}`,
          });
        asset = found[0]!;
      }
      if (typeof v.loggedAt !== 'string')
        return errorOf({ code: 'missing_value', column: 'loggedAt', value: null, message: 'loggedAt is required' });
      const parsed = CreateHoursBody.safeParse({ ...v, assetId: asset.id });
      if (!parsed.success) return errorOf(zodRowError(parsed.error, v));
      const input = parsed.data;
      if (typeof v.projectId === 'string' && !projects.has(v.projectId))
        return errorOf({
          code: 'unknown_reference',
          column: 'projectId',
          value: v.projectId,
          message: 'no project with this id',
        });
      const at = input.loggedAt!;
      if (at.getTime() > now + FUTURE_SKEW_MS)
        return errorOf({
          code: 'invalid_value',
          column: 'loggedAt',
          value: String(v.loggedAt),
          message: 'loggedAt cannot be in the future',
        });
      const metered = asset.meterType !== 'NONE';
      if (metered && input.hoursReading === undefined)
        return errorOf({
          code: 'missing_value',
          column: 'hoursReading',
          value: null,
          message: `hoursReading is required (meter ${asset.meterType})`,
        });
      if (!metered && input.hoursReading !== undefined)
        return errorOf({
          code: 'invalid_value',
          column: 'hoursReading',
          value: String(v.hoursReading),
          message: 'this asset has no meter (meterType NONE)',
        });
      if (!metered && !input.state)
        return errorOf({
          code: 'missing_value',
          column: 'state',
          value: null,
          message: 'state is required for assets without a meter',
        });
      const older = metered && asset.lastMeterAt && at < asset.lastMeterAt ? asset.lastMeterAt : null;
      return { assetId: asset.id, at: at.toISOString(), input, older };
    });
    const candidates = staged.filter((x): x is Staged => 'input' in x);
    const stored = await storedReadings(db, ctx.orgId, candidates);
    return staged.map((x, i): Decision => {
      if (!('input' in x)) return x;
      const key = `${x.assetId}|${x.at}`;
      const existing = stored.get(key);
      const reading = x.input.hoursReading ?? 0;
      if (existing !== undefined) {
        if (existing === reading) return { action: 'unchanged', targetId: x.assetId, key, error: null };
        return errorOf({
          code: 'conflicting_reading',
          column: 'hoursReading',
          value: String(rows[i]!.values.hoursReading ?? ''),
          message: `a reading of ${existing} is stored for this asset at this time`,
        });
      }
      const older = x.older;
      if (older)
        return errorOf({
          code: 'reading_out_of_order',
          column: 'loggedAt',
          value: String(rows[i]!.values.loggedAt),
          message: `the asset has a later reading (${older.toISOString()}); readings are imported in time order`,
        });
      return { action: 'create', targetId: x.assetId, key, error: null };
    });
  },

  async afterValidate(db, ctx, importId, header) {
    // A reading lower than the one before it on the asset (in the file, or stored) needs a note, as on POST /hours.
    const lower = await db.sql.query<{ rowNumber: number; reading: number; prev: number }>(
      `SELECT "rowNumber", reading, prev FROM (
         SELECT r."rowNumber", r.reading, r.note,
           COALESCE(lag(r.reading) OVER (PARTITION BY r."targetId" ORDER BY r.at, r."rowNumber"), a."lastMeterReading") AS prev
         FROM (SELECT "rowNumber", "targetId", ("values"->>'loggedAt')::timestamptz AS at,
                 ("values"->>'hoursReading')::float8 AS reading, "values"->>'note' AS note
               FROM import_rows WHERE "orgId" = $1 AND "importId" = $2 AND action = 'create'
                 AND "values" ? 'hoursReading') r
         JOIN assets a ON a.id = r."targetId" AND a."orgId" = $1
       ) seq WHERE reading < prev AND (note IS NULL OR note = '')`,
      [ctx.orgId, importId],
    );
    if (lower.length === 0) return;
    await db.sql.query(
      `UPDATE import_rows i SET action = 'error', "errorCode" = 'reading_decreases', "errorColumn" = $3,
         "errorValue" = d.reading::text,
         "errorMessage" = 'lower than the previous reading (' || d.prev || '); a note explaining it is required'
       FROM jsonb_to_recordset($4::jsonb) AS d(n int, reading float8, prev float8)
       WHERE i."orgId" = $1 AND i."importId" = $2 AND i."rowNumber" = d.n`,
      [
        ctx.orgId,
        importId,
        header('hoursReading'),
        JSON.stringify(lower.map((l) => ({ n: l.rowNumber, reading: l.reading, prev: l.prev }))),
      ],
    );
  },

  async write({ db, hours }, ctx, importId, rows) {
    const groups = new Map<string, StoredRow[]>();
    for (const row of rows) {
      const group = groups.get(row.targetId!);
      if (group) group.push(row);
      else groups.set(row.targetId!, [row]);
    }
    const queue = [...groups.entries()];
    const written: { rowNumber: number; resultId: string; prior: null; writtenUpdatedAt: null }[] = [];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [assetId, group] = next;
        const readings = group.map((row) => ({
          input: CreateHoursBody.parse({ ...row.values, assetId }),
          key: readingKey(importId, row.rowNumber),
        }));
        try {
          const logs = await hours(ctx, assetId, readings, { source: 'import', id: importId });
          logs.forEach((log, i) =>
            written.push({ rowNumber: group[i]!.rowNumber, resultId: log.logId, prior: null, writtenUpdatedAt: null }),
          );
        } catch (err) {
          queue.length = 0;
          if (err instanceof BatchEntryError) throw new PredictionMismatch(group[err.index]!.rowNumber, err.message);
          throw err;
        }
      }
    };
    try {
      const results = await Promise.allSettled(Array.from({ length: Math.min(PARALLEL_ASSETS, queue.length) }, worker));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      await markWritten(db.prisma, ctx.orgId, importId, written);
    }
  },

  async rollback(tx, ctx, importId) {
    const rows = await writtenRows(tx, ctx.orgId, importId);
    if (rows.length === 0) return;
    const assets = [...new Set(rows.map((r) => r.targetId!))];
    // Locked in id order: readings of these assets wait, so none lands between the check and the delete.
    await tx.$queryRawUnsafe(`SELECT id FROM assets WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`, assets);
    const later = await tx.$queryRawUnsafe<{ assetId: string }[]>(
      `SELECT DISTINCT m."assetId" FROM meter_logs m
       JOIN (SELECT "assetId", max("loggedAt") AS last FROM meter_logs
             WHERE "orgId" = $1 AND source = 'import' AND "sourceId" = $2 GROUP BY "assetId") i ON i."assetId" = m."assetId"
       WHERE m."orgId" = $1 AND m."loggedAt" > i.last AND NOT (m.source = 'import' AND m."sourceId" = $2)`,
      ctx.orgId,
      importId,
    );
    if (later.length > 0) {
      const set = new Set(later.map((l) => l.assetId));
      throw rowsChanged(rows.filter((r) => set.has(r.targetId!)).map((r) => r.rowNumber));
    }
    await tx.$executeRawUnsafe(
      `DELETE FROM meter_logs WHERE "orgId" = $1 AND source = 'import' AND "sourceId" = $2`,
      ctx.orgId,
      importId,
    );
    // Each asset's meter goes back to its latest remaining reading.
    await tx.$executeRawUnsafe(
      `UPDATE assets a SET "lastMeterReading" = l."hoursReading", "lastMeterAt" = l."loggedAt", "updatedAt" = now()
       FROM (SELECT a2.id, last."hoursReading", last."loggedAt" FROM assets a2
             LEFT JOIN LATERAL (SELECT "hoursReading", "loggedAt" FROM meter_logs m WHERE m."assetId" = a2.id
               ORDER BY "loggedAt" DESC, id DESC LIMIT 1) last ON true
             WHERE a2.id = ANY($2::text[]) AND a2."orgId" = $1 AND a2."meterType" <> 'NONE') l
       WHERE a.id = l.id`,
      ctx.orgId,
      assets,
    );
  },
};
