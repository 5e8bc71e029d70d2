// The figures of the cost reports, summed in the database: one statement per family of figures, each grouped by
// asset (and by project, which a cost carries itself), numeric sums returned as text for exact decimals.
import type { SqlRunner } from '../../db/database.ts';
import type { CostAssetRow, EconomyRow, FamilyRow, MeterRow } from './cost-rows.schemas.ts';

export interface Period {
  orgId: string;
  from: Date;
  to: Date;
  /** One asset (GET /assets/{id}/costs), else the whole organisation. */
  assetId: string | null;
}

const params = (p: Period) => [p.orgId, p.from.toISOString(), p.to.toISOString(), ...(p.assetId ? [p.assetId] : [])];
const one = (p: Period, column: string) => (p.assetId ? `AND ${column} = $4` : '');
/** A statement's prepared name: one per text, and the text differs for one asset. */
const named = (p: Period, base: string) => `costs-${base}${p.assetId ? '-asset' : ''}`;
const IN_PERIOD = (column: string) => `${column} >= $2::timestamptz AND ${column} < $3::timestamptz`;

/** US gallons (the seed's default unit on meter logs) or litres, to litres; `m` is the meter log. */
const LOG_LITERS = `m."fuelVolume"::numeric * CASE WHEN m."fuelUnit" = 'LITER' THEN 1 ELSE 3.785411784 END`;
/** Meter logs that carry fuel (partial index meter_logs_orgId_fuel_loggedAt_idx); a fuel entry's own log never does. */
const LOG_FUEL = `(m."fuelVolume" IS NOT NULL OR m."fuelCostTotal" IS NOT NULL) AND m.source <> 'fuel'`;

/**
 * A reading that counts in distances: not rejected in review, and not the reading of a voided fill.
 * `m` is the meter log.
 */
const VALID_READING = `m."reviewStatus" <> 'REJECTED' AND (m.source <> 'fuel' OR NOT EXISTS (
  SELECT 1 FROM fuel_entries v WHERE v."orgId" = m."orgId" AND v."logId" = m.id AND v.void))`;

export async function fuelEntryCosts(sql: SqlRunner, p: Period): Promise<FamilyRow[]> {
  return sql.query<FamilyRow>(
    `SELECT "assetId", "projectId", sum("totalCost")::text AS amount, sum("volumeLiters")::text AS liters
     FROM fuel_entries WHERE "orgId" = $1 AND ${IN_PERIOD('"fueledAt"')} ${one(p, '"assetId"')}
     GROUP BY "assetId", "projectId"`,
    params(p),
    named(p, 'fuel-entries'),
  );
}

/** Fuel recorded on meter logs (fuelVolume, fuelUnit, fuelCostTotal): each log is one full fill. */
export async function meterLogFuelCosts(sql: SqlRunner, p: Period): Promise<FamilyRow[]> {
  return sql.query<FamilyRow>(
    `SELECT "assetId", "projectId", COALESCE(sum(round("fuelCostTotal"::numeric, 2)), 0)::text AS amount,
       COALESCE(sum(${LOG_LITERS}), 0)::text AS liters
     FROM meter_logs m WHERE "orgId" = $1 AND ${IN_PERIOD('"loggedAt"')} AND ${LOG_FUEL} ${one(p, '"assetId"')}
     GROUP BY "assetId", "projectId"`,
    params(p),
    named(p, 'log-fuel'),
  );
}

export async function expenseCosts(sql: SqlRunner, p: Period): Promise<FamilyRow[]> {
  return sql.query<FamilyRow>(
    `SELECT "assetId", "projectId", sum(amount)::text AS amount
     FROM expenses WHERE "orgId" = $1 AND ${IN_PERIOD('"incurredAt"')} ${one(p, '"assetId"')}
     GROUP BY "assetId", "projectId"`,
    params(p),
    named(p, 'expenses'),
  );
}

/** Part or labour lines by when they were recorded, on the asset and project of their work order. */
export async function lineCosts(sql: SqlRunner, p: Period, table: 'part' | 'labor'): Promise<FamilyRow[]> {
  const from = table === 'part' ? 'work_order_part_lines' : 'work_order_labor_lines';
  return sql.query<FamilyRow>(
    `SELECT w."assetId", w."projectId", sum(l."totalCost")::text AS amount
     FROM ${from} l JOIN work_orders w ON w.id = l."workOrderId" AND w."orgId" = l."orgId"
     WHERE l."orgId" = $1 AND ${IN_PERIOD('l."createdAt"')} AND w."assetId" IS NOT NULL ${one(p, 'w."assetId"')}
     GROUP BY w."assetId", w."projectId"`,
    params(p),
    named(p, `${table}-lines`),
  );
}

/**
 * Repairs' cost by their creation, unless their work order has part or labour lines (the lines are then the
 * cost: never both). The project is the work order's, else the repair's own.
 */
export async function repairCosts(sql: SqlRunner, p: Period): Promise<FamilyRow[]> {
  return sql.query<FamilyRow>(
    `SELECT r."assetId", COALESCE(w."projectId", r."projectId") AS "projectId", sum(round(r.cost::numeric, 2))::text AS amount
     FROM repairs r LEFT JOIN work_orders w ON w.id = r."workOrderId" AND w."orgId" = r."orgId"
     WHERE r."orgId" = $1 AND ${IN_PERIOD('r."createdAt"')} AND r.cost IS NOT NULL AND r."assetId" IS NOT NULL
       ${one(p, 'r."assetId"')}
       AND NOT EXISTS (SELECT 1 FROM work_order_part_lines l WHERE l."orgId" = r."orgId" AND l."workOrderId" = r."workOrderId")
       AND NOT EXISTS (SELECT 1 FROM work_order_labor_lines l WHERE l."orgId" = r."orgId" AND l."workOrderId" = r."workOrderId")
     GROUP BY r."assetId", COALESCE(w."projectId", r."projectId")`,
    params(p),
    named(p, 'repairs'),
  );
}

/** Per metered asset: the last valid reading at or before `from`, the first in the period, the last before `to`. */
export async function meterReadings(sql: SqlRunner, p: Period): Promise<MeterRow[]> {
  const reading = (where: string, dir: 'ASC' | 'DESC') => `(SELECT m."hoursReading" FROM meter_logs m
     WHERE m."assetId" = a.id AND m."orgId" = a."orgId" AND ${where} AND ${VALID_READING}
     ORDER BY m."loggedAt" ${dir}, m.id ${dir} LIMIT 1)`;
  return sql.query<MeterRow>(
    `SELECT a.id AS "assetId", ${reading('m."loggedAt" <= $2::timestamptz', 'DESC')} AS before,
       ${reading(IN_PERIOD('m."loggedAt"'), 'ASC')} AS first, ${reading('m."loggedAt" < $3::timestamptz', 'DESC')} AS last
     FROM assets a WHERE a."orgId" = $1 AND a."meterType" <> 'NONE' ${one(p, 'a.id')}`,
    params(p),
    named(p, 'meters'),
  );
}

/** A fuel entry that closes a segment: a full, unvoided fill whose reading was recorded and not rejected. */
const CLOSING_ENTRY = `NOT e.partial AND NOT e.void AND e."meterReading" IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM meter_logs r WHERE r."orgId" = e."orgId" AND r.id = e."logId" AND r."reviewStatus" = 'REJECTED')`;
/** A meter log that is a fill with a volume (the seed's way: always full); `m` is the log. */
const LOG_FILL = `${LOG_FUEL} AND m."fuelVolume" IS NOT NULL`;

/** The first (ASC) or last (DESC) closing fill of the asset `a` in the period, of either kind, by (time, id). */
const closingFill = (dir: 'ASC' | 'DESC') => `(
  (SELECT e."fueledAt" AS t, e.id, e."meterReading" AS reading FROM fuel_entries e
   WHERE e."orgId" = a."orgId" AND e."assetId" = a.id AND ${IN_PERIOD('e."fueledAt"')} AND ${CLOSING_ENTRY}
   ORDER BY e."fueledAt" ${dir}, e.id ${dir} LIMIT 1)
  UNION ALL
  (SELECT m."loggedAt", m.id, m."hoursReading" FROM meter_logs m
   WHERE m."orgId" = a."orgId" AND m."assetId" = a.id AND ${IN_PERIOD('m."loggedAt"')} AND ${LOG_FILL}
     AND m."reviewStatus" <> 'REJECTED'
   ORDER BY m."loggedAt" ${dir}, m.id ${dir} LIMIT 1)
  ORDER BY 1 ${dir}, 2 ${dir} LIMIT 1)`;

/** The litres of the asset's fills of the period on one side of a closing fill `c` (`<=`: up to it, `>`: after). */
const fillsBeyond = (op: '<=' | '>', c: string) => {
  const bound = op === '<=' ? '>= $2::timestamptz' : '< $3::timestamptz';
  return `SELECT e."volumeLiters" FROM fuel_entries e
      WHERE e."orgId" = a."orgId" AND e."assetId" = a.id AND e."fueledAt" ${bound} AND (e."fueledAt", e.id) ${op} (${c}.t, ${c}.id)
      UNION ALL
      SELECT ${LOG_LITERS} FROM meter_logs m
      WHERE m."orgId" = a."orgId" AND m."assetId" = a.id AND m."loggedAt" ${bound} AND (m."loggedAt", m.id) ${op} (${c}.t, ${c}.id)
        AND ${LOG_FILL}`;
};

/**
 * Fuel economy inputs per asset, over the period's fills (fuel entries and fuel on meter logs, in time order): a
 * full fill with a valid reading closes a segment; the segments between the first and the last such fill are
 * complete, so their distance is last - first reading and their volume every fill after the first up to the last.
 * Per asset, index probes find the first and last closing fills and the litres outside them (`outside`); the volume
 * of the complete segments is then the asset's litres of the period (its fuel families' sum) minus `outside`, so the
 * statement reads a few fills per asset and never sorts the period's fills.
 */
export async function economySegments(sql: SqlRunner, p: Period): Promise<EconomyRow[]> {
  return sql.query<EconomyRow>(
    `SELECT a.id AS "assetId", f.reading AS first, l.reading AS last,
       (SELECT COALESCE(sum(liters), 0) FROM (
          ${fillsBeyond('<=', 'f')}
          UNION ALL
          ${fillsBeyond('>', 'l')}
       ) o(liters))::text AS outside
     FROM assets a CROSS JOIN LATERAL ${closingFill('ASC')} f CROSS JOIN LATERAL ${closingFill('DESC')} l
     WHERE a."orgId" = $1 ${one(p, 'a.id')} AND (f.t, f.id) < (l.t, l.id)`,
    params(p),
    named(p, 'economy'),
  );
}

export async function costAssets(sql: SqlRunner, p: Period): Promise<CostAssetRow[]> {
  return sql.query<CostAssetRow>(
    `SELECT a.id, a.nickname, a."assetClass"::text AS "assetClass", a."yardId", y.name AS "yardName",
       a."meterType"::text AS "meterType", a."meterUnit", a."lifecycleStatus"::text AS "lifecycleStatus", a."soldAt",
       a."depreciationMethod"::text AS "depreciationMethod", a."purchaseCost", a."purchaseDate", a."usefulLifeYears",
       a."salvageValue"::text AS "salvageValue"
     FROM assets a LEFT JOIN yards y ON y.id = a."yardId"
     WHERE a."orgId" = $1 ${p.assetId ? 'AND a.id = $2' : ''}`,
    p.assetId ? [p.orgId, p.assetId] : [p.orgId],
    named(p, 'assets'),
  );
}

export async function projectNames(sql: SqlRunner, orgId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.query<{ id: string; name: string }>(
    `SELECT id, name FROM projects WHERE "orgId" = $1 AND id = ANY($2::text[])`,
    [orgId, ids],
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}
