import type { SqlQuery, SqlRunner } from '../../db/database.ts';
import type { TelematicsConnection, TelematicsEquipment, TelematicsRun } from '../../generated/prisma/client.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { FeedEquipment } from './telematics-feed.rules.ts';

export function listConnections(sql: SqlRunner, orgId: string, after: [Date, string] | null, take: number) {
  const { text, params } = keysetSql({
    from: 'telematics_connections',
    where: ['"orgId" = $1'],
    params: [orgId],
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take,
  });
  return sql.query<TelematicsConnection>(text, params);
}

/** Newest first on telematics_runs(connectionId, startedAt, id). */
export function listRuns(sql: SqlRunner, connectionId: string, after: [Date, string] | null, take: number) {
  const { text, params } = keysetSql({
    from: 'telematics_runs',
    where: ['"connectionId" = $1'],
    params: [connectionId],
    order: [{ column: '"startedAt"', cast: 'timestamptz' }, { column: 'id' }],
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take,
  });
  return sql.query<TelematicsRun>(text, params);
}

/**
 * By key on telematics_equipment(connectionId, equipmentKey); with `matched`, on the partial index of linked or of
 * unlinked machines in the same order, so a page never walks past machines of the other kind.
 */
export function listEquipment(
  sql: SqlRunner,
  connectionId: string,
  matched: boolean | undefined,
  after: string | null,
  take: number,
) {
  const where = ['"connectionId" = $1'];
  if (matched !== undefined) where.push(matched ? '"assetId" IS NOT NULL' : '"assetId" IS NULL');
  const { text, params } = keysetSql({
    from: 'telematics_equipment',
    where,
    params: [connectionId],
    order: [{ column: '"equipmentKey"' }],
    direction: 'asc',
    after: after === null ? null : [after],
    take,
  });
  return sql.query<TelematicsEquipment>(text, params);
}

export interface KnownMachine {
  equipmentKey: string;
  assetId: string | null;
  linkMode: string | null;
}

/** The page's machines already known for the connection: one query per page. */
export function knownMachines(sql: SqlQuery, connectionId: string, keys: string[]) {
  return sql.query<KnownMachine>(
    `SELECT "equipmentKey", "assetId", "linkMode" FROM telematics_equipment
     WHERE "connectionId" = $1 AND "equipmentKey" = ANY($2::text[])`,
    [connectionId, keys],
  );
}

/**
 * Assets whose vin or serial equals one of the values (trimmed, case-insensitive), with whether another machine
 * of the organisation already feeds them. Each value is looked up in the match-key indexes on assets
 * ("orgId", lower(btrim(vin|serial))): the expressions here must stay those of the indexes.
 */
export function matchCandidates(sql: SqlQuery, orgId: string, values: string[]) {
  return sql.query<{ id: string; vin: string | null; serial: string | null; linked: boolean }>(
    `SELECT a.id, a.vin, a.serial,
       EXISTS (SELECT 1 FROM telematics_equipment e WHERE e."orgId" = a."orgId" AND e."assetId" = a.id) AS linked
     FROM assets a
     WHERE a."orgId" = $1 AND (lower(btrim(a.vin)) = ANY($2::text[]) OR lower(btrim(a.serial)) = ANY($2::text[]))`,
    [orgId, values],
  );
}

export interface MeterRow {
  id: string;
  meterType: 'HOURS' | 'ODOMETER' | 'NONE';
  meterUnit: string;
  lastMeterReading: number | null;
  lastMeterAt: Date | null;
}

/** Locks the page's linked assets in id order (no deadlock with another page) and reads their meters fresh. */
export function lockMeters(sql: SqlQuery, orgId: string, assetIds: string[]) {
  if (assetIds.length === 0) return Promise.resolve([] as MeterRow[]);
  return sql.query<MeterRow>(
    `SELECT id, "meterType"::text AS "meterType", "meterUnit", "lastMeterReading", "lastMeterAt" FROM assets
     WHERE "orgId" = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
    [orgId, assetIds],
  );
}

const date = (t: { at: Date } | null) => t?.at.toISOString() ?? null;

/**
 * Every machine of the page in one statement (arrays unnested): the header, the latest snapshot values and, for
 * a machine the run matched, its link. A value the page does not carry keeps the previous one.
 */
export async function upsertMachines(
  sql: SqlQuery,
  orgId: string,
  connectionId: string,
  machines: { machine: FeedEquipment & { key: string }; autoAssetId: string | null }[],
  seenAt: Date,
) {
  if (machines.length === 0) return;
  const col = <T>(f: (m: FeedEquipment & { key: string }) => T) => machines.map((x) => f(x.machine));
  await sql.query(
    `INSERT INTO telematics_equipment AS e (id, "orgId", "connectionId", "equipmentKey", pin, "serialNumber", "equipmentId",
       "oemName", model, "assetId", "linkMode", "lastSeenAt", lat, lng, "locationAt", "operatingHours", "operatingHoursAt",
       "idleHours", "idleHoursAt", odometer, "odometerUnit", "odometerAt", "fuelUsed", "fuelUsedUnit", "fuelUsedAt",
       "fuelRemainingPercent", "fuelRemainingAt", "defRemainingPercent", "defRemainingAt", "engineRunning", "engineRunningAt")
     SELECT gen_random_uuid()::text, $1, $2, u.k, u.pin, u.sn, u.eid, u.oem, u.model, u.asset,
       CASE WHEN u.asset IS NULL THEN NULL ELSE 'auto' END, $3::timestamptz, u.lat, u.lng, u.loc_at, u.h, u.h_at, u.ih, u.ih_at,
       u.odo, u.odo_unit, u.odo_at, u.fuel, u.fuel_unit, u.fuel_at, u.fr, u.fr_at, u.dr, u.dr_at, u.er, u.er_at
     FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::float8[],
       $12::float8[], $13::timestamptz[], $14::float8[], $15::timestamptz[], $16::float8[], $17::timestamptz[], $18::float8[],
       $19::text[], $20::timestamptz[], $21::float8[], $22::text[], $23::timestamptz[], $24::float8[], $25::timestamptz[],
       $26::float8[], $27::timestamptz[], $28::boolean[], $29::timestamptz[])
       AS u(k, pin, sn, eid, oem, model, asset, lat, lng, loc_at, h, h_at, ih, ih_at, odo, odo_unit, odo_at, fuel, fuel_unit,
            fuel_at, fr, fr_at, dr, dr_at, er, er_at)
     ON CONFLICT ("connectionId", "equipmentKey") DO UPDATE SET
       pin = EXCLUDED.pin, "serialNumber" = EXCLUDED."serialNumber", "equipmentId" = EXCLUDED."equipmentId",
       "oemName" = EXCLUDED."oemName", model = EXCLUDED.model, "lastSeenAt" = EXCLUDED."lastSeenAt",
       "assetId" = CASE WHEN e."linkMode" IS NULL AND EXCLUDED."assetId" IS NOT NULL THEN EXCLUDED."assetId" ELSE e."assetId" END,
       "linkMode" = CASE WHEN e."linkMode" IS NULL AND EXCLUDED."assetId" IS NOT NULL THEN 'auto' ELSE e."linkMode" END,
       lat = COALESCE(EXCLUDED.lat, e.lat), lng = COALESCE(EXCLUDED.lng, e.lng),
       "locationAt" = COALESCE(EXCLUDED."locationAt", e."locationAt"),
       "operatingHours" = COALESCE(EXCLUDED."operatingHours", e."operatingHours"),
       "operatingHoursAt" = COALESCE(EXCLUDED."operatingHoursAt", e."operatingHoursAt"),
       "idleHours" = COALESCE(EXCLUDED."idleHours", e."idleHours"),
       "idleHoursAt" = COALESCE(EXCLUDED."idleHoursAt", e."idleHoursAt"),
       odometer = COALESCE(EXCLUDED.odometer, e.odometer), "odometerUnit" = COALESCE(EXCLUDED."odometerUnit", e."odometerUnit"),
       "odometerAt" = COALESCE(EXCLUDED."odometerAt", e."odometerAt"),
       "fuelUsed" = COALESCE(EXCLUDED."fuelUsed", e."fuelUsed"), "fuelUsedUnit" = COALESCE(EXCLUDED."fuelUsedUnit", e."fuelUsedUnit"),
       "fuelUsedAt" = COALESCE(EXCLUDED."fuelUsedAt", e."fuelUsedAt"),
       "fuelRemainingPercent" = COALESCE(EXCLUDED."fuelRemainingPercent", e."fuelRemainingPercent"),
       "fuelRemainingAt" = COALESCE(EXCLUDED."fuelRemainingAt", e."fuelRemainingAt"),
       "defRemainingPercent" = COALESCE(EXCLUDED."defRemainingPercent", e."defRemainingPercent"),
       "defRemainingAt" = COALESCE(EXCLUDED."defRemainingAt", e."defRemainingAt"),
       "engineRunning" = COALESCE(EXCLUDED."engineRunning", e."engineRunning"),
       "engineRunningAt" = COALESCE(EXCLUDED."engineRunningAt", e."engineRunningAt"),
       "updatedAt" = now()`,
    [
      orgId,
      connectionId,
      seenAt.toISOString(),
      col((m) => m.key),
      col((m) => m.pin),
      col((m) => m.serialNumber),
      col((m) => m.equipmentId),
      col((m) => m.oemName),
      col((m) => m.model),
      machines.map((x) => x.autoAssetId),
      col((m) => m.location?.value.lat ?? null),
      col((m) => m.location?.value.lng ?? null),
      col((m) => date(m.location)),
      col((m) => m.operatingHours?.value ?? null),
      col((m) => date(m.operatingHours)),
      col((m) => m.idleHours?.value ?? null),
      col((m) => date(m.idleHours)),
      col((m) => m.odometer?.value.value ?? null),
      col((m) => m.odometer?.value.unit ?? null),
      col((m) => date(m.odometer)),
      col((m) => m.fuelUsed?.value.value ?? null),
      col((m) => m.fuelUsed?.value.unit ?? null),
      col((m) => date(m.fuelUsed)),
      col((m) => m.fuelRemainingPercent?.value ?? null),
      col((m) => date(m.fuelRemainingPercent)),
      col((m) => m.defRemainingPercent?.value ?? null),
      col((m) => date(m.defRemainingPercent)),
      col((m) => m.engineRunning?.value ?? null),
      col((m) => date(m.engineRunning)),
    ],
  );
}

/** The organisation's yard with coordinates nearest the point (haversine over its yards, in SQL). */
export async function nearestYard(sql: SqlRunner, orgId: string, lat: number, lng: number) {
  const [row] = await sql.query<{ id: string; name: string; d: number }>(
    `SELECT id, name, 2 * 6371008.8 * asin(least(1, sqrt(
         power(sin(radians(lat - $2) / 2), 2) + cos(radians($2)) * cos(radians(lat)) * power(sin(radians(lng - $3) / 2), 2)
       ))) AS d
     FROM yards WHERE "orgId" = $1 AND lat IS NOT NULL AND lng IS NOT NULL ORDER BY d, id LIMIT 1`,
    [orgId, lat, lng],
  );
  return row ? { yardId: row.id, name: row.name, distanceMeters: Math.round(Number(row.d)) } : null;
}
