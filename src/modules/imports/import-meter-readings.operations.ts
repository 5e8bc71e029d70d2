// Meter readings imported: each row names its asset (assetId, or the `match` column) and is decided against the
// asset's stored readings; the commit writes them through the hours service (import-meter-readings-commit).
import type { Database } from '../../db/database.ts';
import { CreateHoursBody, type CreateHoursInput } from '../hours/hours.schemas.ts';
import { nextTurn } from '../../core/event-loop.ts';
import type { FieldSpec, RowError } from './import-fields.rules.ts';
import type { Decision, ImportHandler, PreparedRow } from './import-handler.operations.ts';
import { assetsById, assetsByMatch, existingIds } from './import-lookups.repository.ts';
import { zodRowError } from './import-assets.operations.ts';
import { rollbackReadings, WRITE_BATCH, writeReadings } from './import-meter-readings-commit.operations.ts';
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
/** Rows read between two turns of the event loop: requests are served in between. */
const YIELD_EVERY = 200;

interface Staged {
  assetId: string;
  at: string;
  input: CreateHoursInput;
  /** The asset's latest stored reading, when this one is older. */
  older: Date | null;
}

const errorOf = (error: RowError): Decision => ({ action: 'error', targetId: null, key: null, error });

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
    const staged: (Staged | Decision)[] = [];
    for (const [i, row] of rows.entries()) {
      if (i % YIELD_EVERY === YIELD_EVERY - 1) await nextTurn();
      staged.push(stage(row));
    }
    function stage(row: PreparedRow): Staged | Decision {
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
    }
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

  write: writeReadings,
  rollback: rollbackReadings,
};
