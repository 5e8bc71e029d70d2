import { RENEWAL_WINDOW_DAYS } from '../notifications/notifications.repository.ts';
import { REMINDER_ALERT_SQL } from '../service-reminders/service-reminders.operations.ts';
import type { MeterLog } from '../../generated/prisma/client.ts';
import type { SqlQuery, SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { enumIn, keysetSql } from '../../core/pagination.ts';
import { REVIEW_STATUSES, type ListHoursInput } from './hours.schemas.ts';

export interface LockedAsset {
  id: string;
  nickname: string;
  meterType: 'HOURS' | 'ODOMETER' | 'NONE';
  meterUnit: string;
  lastMeterReading: number | null;
  lastMeterAt: Date | null;
  pmInterval: number | null;
  pmBaselineReading: number | null;
  lifecycleStatus: string;
  registrationExpiresAt: Date | null;
  insuranceExpiresAt: Date | null;
}

/**
 * Locks the asset row (SELECT ... FOR UPDATE) until the transaction ends. Every reading on the asset
 * takes this lock first, so concurrent readings queue up: each sees the previous one's lastMeterReading
 * (no two deltas computed from the same "previous") and the one-open-AUTO_PM check cannot race.
 */
export async function lockMeteredAsset(tx: Tx, orgId: string, assetId: string): Promise<LockedAsset | null> {
  const rows = await tx.$queryRawUnsafe<LockedAsset[]>(
    `SELECT ${LOCKED_ASSET_COLUMNS} FROM assets WHERE id = $1 AND "orgId" = $2 FOR UPDATE`,
    assetId,
    orgId,
  );
  return rows[0] ?? null;
}

export const LOCKED_ASSET_COLUMNS = `id, nickname, "meterType"::text AS "meterType", "meterUnit", "lastMeterReading", "lastMeterAt", "pmInterval",
  "pmBaselineReading", "lifecycleStatus"::text AS "lifecycleStatus", "registrationExpiresAt", "insuranceExpiresAt"`;

/**
 * Newest first by loggedAt. Index per shape: by asset meter_logs(assetId, loggedAt, id); org-wide
 * meter_logs(orgId, loggedAt, id); a review-status subset (PENDING is the review queue) one range per
 * status on meter_logs(orgId, reviewStatus, loggedAt, id).
 */
export async function listMeterLogs(
  sql: SqlRunner,
  orgId: string,
  query: ListHoursInput,
  after: [Date, string] | null,
): Promise<MeterLog[]> {
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.assetId) where.push(`"assetId" = $${params.push(query.assetId)}`);
  if (query.since) where.push(`"loggedAt" >= $${params.push(query.since.toISOString())}::timestamptz`);
  // The cursor's time as a plain bound too: partitions are pruned by it (a row comparison prunes nothing).
  if (after) where.push(`"loggedAt" <= $${params.push(after[0].toISOString())}::timestamptz`);
  // By asset the asset's own index is narrower than any status range: the status is a filter there.
  const byAsset = query.assetId !== undefined && query.assetId !== null;
  if (byAsset && query.reviewStatus.length < REVIEW_STATUSES.length) {
    where.push(enumIn(params, '"reviewStatus"', 'ReviewStatus', query.reviewStatus));
  }
  const { text, params: all } = keysetSql({
    from: 'meter_logs',
    where,
    params,
    order: [{ column: '"loggedAt"', cast: 'timestamptz' }, { column: 'id' }],
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
    split: byAsset ? undefined : { column: '"reviewStatus"', values: query.reviewStatus, all: REVIEW_STATUSES },
  });
  return sql.query<MeterLog>(text, all);
}

/**
 * The reading an idempotency key (header or clientMutationId) already recorded, if any: the key's row in
 * meter_log_keys names the reading's (id, loggedAt), so one partition of meter_logs is read whatever its month.
 */
export async function findLogByKey(sql: SqlQuery, orgId: string, key: string): Promise<MeterLog | null> {
  const [log] = await sql.query<MeterLog>(LOG_BY_KEY_SQL, [orgId, key], 'hours_log_by_key');
  return log ?? null;
}

export const LOG_BY_KEY_SQL = `SELECT m.* FROM meter_log_keys k
  JOIN meter_logs m ON m.id = k."meterLogId" AND m."loggedAt" = k."loggedAt" AND m."orgId" = k."orgId"
  WHERE k."orgId" = $1 AND k."clientMutationId" = $2`;

// The project check rides on the asset read (a project's existence does not depend on the asset lock), and so does
// the service reminders' question: one probe of their meter-alert index says whether this reading moves any.
export const ASSET_WITH_PROJECT = `SELECT ${LOCKED_ASSET_COLUMNS},
  ($3::text IS NULL OR EXISTS (SELECT 1 FROM projects p WHERE p.id = $3::text AND p."orgId" = $2)) AS "projectFound",
  ($4::float8 IS NOT NULL AND ${REMINDER_ALERT_SQL}) AS "remindersDue"`;

/** An accepted reading at or past a reminder's meter alert: the reminders path (held readings wait for review). */
export const remindersMove = (
  asset: Pick<ReadAsset, 'remindersDue'>,
  plan: { metered: boolean; values: { reviewStatus: string } },
) => asset.remindersDue && plan.metered && plan.values.reviewStatus === 'NONE';
export type ReadAsset = LockedAsset & { projectFound: boolean; remindersDue: boolean };

/** The asset's own renewal dates decide whether the post-commit heads-up query has anything to find. */
export function renewalDue(asset: LockedAsset, now: Date): boolean {
  if (asset.lifecycleStatus !== 'IN_SERVICE' && asset.lifecycleStatus !== 'OUT_OF_SERVICE') return false;
  const until = now.getTime() + RENEWAL_WINDOW_DAYS * 86_400_000;
  return [asset.registrationExpiresAt, asset.insuranceExpiresAt].some(
    (d) => d !== null && d.getTime() >= now.getTime() && d.getTime() <= until,
  );
}

/** A locked asset with what routes a batch of its readings: an open AUTO_PM flag, and its reminders' lowest alert. */
export type BatchAsset = LockedAsset & { pmOpen: boolean; alertAt: number | null };

/**
 * Locks the asset as lockMeteredAsset does, and reads in the same statement whether an AUTO_PM flag is OPEN or
 * IN_PROGRESS on it and the lowest meter alert of its active reminders (a reading at or past it moves reminders).
 */
export async function lockBatchAsset(tx: Tx, orgId: string, assetId: string): Promise<BatchAsset | null> {
  const rows = await tx.$queryRawUnsafe<BatchAsset[]>(
    `SELECT ${LOCKED_ASSET_COLUMNS},
       EXISTS (SELECT 1 FROM flags f WHERE f."orgId" = $2 AND f."assetId" = assets.id AND f.severity = 'AUTO_PM'
         AND f.status IN ('OPEN', 'IN_PROGRESS')) AS "pmOpen",
       (SELECT min(r."meterAlertAt") FROM service_reminders r WHERE r."orgId" = $2 AND r."assetId" = assets.id
         AND r."meterAlertAt" IS NOT NULL AND NOT r.suspended) AS "alertAt"
     FROM assets WHERE id = $1 AND "orgId" = $2 FOR UPDATE`,
    assetId,
    orgId,
  );
  const row = rows[0];
  return row ? { ...row, alertAt: row.alertAt === null ? null : Number(row.alertAt) } : null;
}

/**
 * The logs that idempotency keys already recorded, by key: one probe of meter_log_keys' primary key per key (the
 * LIMIT keeps it a probe whatever the planner believes of the table, which a large import outgrows before ANALYZE).
 */
export async function logIdsByKey(tx: Tx, orgId: string, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await tx.$queryRawUnsafe<{ key: string; id: string }[]>(
    `SELECT k.key, m.id FROM unnest($2::text[]) AS k(key)
     CROSS JOIN LATERAL (SELECT "meterLogId" AS id FROM meter_log_keys
       WHERE "orgId" = $1 AND "clientMutationId" = k.key LIMIT 1) m`,
    orgId,
    keys,
  );
  return new Map(rows.map((r) => [r.key, r.id]));
}

/** Which of these project ids are projects of the organisation. */
export async function knownProjects(tx: Tx, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM projects WHERE "orgId" = $1 AND id = ANY($2::text[])`,
    orgId,
    ids,
  );
  return new Set(rows.map((r) => r.id));
}
