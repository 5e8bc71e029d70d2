// Recording a meter reading: the rules (delta, review, AUTO_PM, renewals) and the statements that write the log,
// move the asset's meter and record hours.logged together. The hours service calls these; queries alone live in
// hours.repository.ts.
import { randomUUID } from 'node:crypto';
import type { MeterLog } from '../../generated/prisma/client.ts';
import { afterCommit, type Tx } from '../../db/transaction.ts';
import { OUTBOX_NOTIFIED, outboxCtes, outboxEvent, signalQueued } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { insertFlag } from '../flags/flags.operations.ts';
import { assertReferences } from '../shared/references.ts';
import { applyReading, noReminderAlertSql } from '../service-reminders/service-reminders.operations.ts';
import type { CreateHoursInput, READING_SOURCES } from './hours.schemas.ts';
import { reviewReasonFor, roundMeter, servicePointReached } from './hours.rules.ts';
import { LOG_BY_KEY_SQL, lockMeteredAsset, remindersMove, renewalDue, type LockedAsset } from './hours.repository.ts';

/** A reading may be stamped this far ahead of the server clock (device clock skew). */
const FUTURE_SKEW_MS = 5 * 60 * 1000;

/**
 * Opens an AUTO_PM flag when the reading reached the asset's next service point and no AUTO_PM flag is
 * OPEN or IN_PROGRESS on it (at most one; the asset lock makes the check race-free). Returns its id.
 */
export async function openPmFlagIfDue(
  tx: Tx,
  ctx: RequestContext,
  asset: LockedAsset,
  reading: number,
): Promise<string | null> {
  const point = servicePointReached(reading, asset.pmInterval, asset.pmBaselineReading);
  if (point === null) return null;
  const open = await tx.flag.findFirst({
    where: { orgId: ctx.orgId, assetId: asset.id, severity: 'AUTO_PM', status: { in: ['OPEN', 'IN_PROGRESS'] } },
    select: { id: true },
  });
  if (open) return null;
  const flag = await insertFlag(tx, ctx, {
    asset,
    severity: 'AUTO_PM',
    bySystem: true,
    pmDueReading: point,
    note: `Preventive maintenance due at ${point} ${asset.meterUnit} (reading ${reading} ${asset.meterUnit})`,
  });
  return flag.id;
}

export interface RecordedReading {
  log: MeterLog;
  replayed: boolean;
  /** A registration or insurance renewal of the asset falls in the heads-up window: worth the renewal sweep. */
  renewalDue?: boolean;
}

/**
 * Records one reading (or state-only entry) inside the caller's transaction: idempotency, validation
 * against the asset's meter, delta, review routing, AUTO_PM, the asset's last reading, hours.logged.
 * Validation failures throw ValidationError (422) and leave nothing behind.
 */
export async function recordReading(
  tx: Tx,
  ctx: RequestContext,
  input: CreateHoursInput,
  idempotencyKey: string | null,
  origin: ReadingOrigin = API_ORIGIN,
): Promise<RecordedReading> {
  const asset = await lockMeteredAsset(tx, ctx.orgId, input.assetId);
  if (!asset) throw noSuchAsset();
  // Re-checked under the lock: identical requests for one asset queue here and find the first one's row.
  if (idempotencyKey) {
    const [existing] = await tx.$queryRawUnsafe<MeterLog[]>(LOG_BY_KEY_SQL, ctx.orgId, idempotencyKey);
    if (existing) return { log: existing, replayed: true };
  }
  await assertReferences(tx, ctx.orgId, [{ field: 'projectId', kind: 'project', id: input.projectId }]);
  const now = new Date();
  const plan = planReading(asset, input, idempotencyKey, now, origin);
  // Held readings skip PM: a typo must not open a service flag (approval applies it, see reviewReading).
  const autoFlagId = plan.pmCheck ? await openPmFlagIfDue(tx, ctx, asset, plan.values.hoursReading) : null;
  const { sql, params } = recordLogStatement(ctx, asset, plan, autoFlagId);
  const [row] = await tx.$queryRawUnsafe<(MeterLog & { outboxNotified?: string | null })[]>(sql, ...params);
  // Service reminders follow accepted readings only (a held reading applies when approved): same transaction.
  if (remindersMove({ remindersDue: true }, plan)) await applyReading(tx, ctx, asset.id, plan.values);
  return {
    ...logAndSignal(row, () => afterCommit(tx, signalQueued)),
    replayed: false,
    renewalDue: renewalDue(asset, now),
  };
}

export const noSuchAsset = () => new ValidationError({ assetId: 'no asset with this id in your organisation' });
export const noSuchProject = () => new ValidationError({ projectId: 'no project with this id in your organisation' });

export type NewLog = { source: ReadingOrigin['source'] } & Pick<
  MeterLog,
  | 'projectId'
  | 'loggedByDeviceId'
  | 'hoursReading'
  | 'delta'
  | 'state'
  | 'fuelVolume'
  | 'fuelUnit'
  | 'fuelCostTotal'
  | 'note'
  | 'lat'
  | 'lng'
  | 'clientMutationId'
  | 'reviewStatus'
  | 'reviewReason'
  | 'sourceId'
  | 'loggedAt'
>;

/** Where a reading comes from: the API, or a telematics connection or an inspection (its id in `id`). */
export interface ReadingOrigin {
  source: (typeof READING_SOURCES)[number];
  id: string | null;
}

export const API_ORIGIN: ReadingOrigin = { source: 'api', id: null };

export interface ReadingPlan {
  metered: boolean;
  values: NewLog;
  /** The reading is not held for review and reached a service point: the one-open-AUTO_PM check applies. */
  pmCheck: boolean;
}

/**
 * The rules of one reading against its locked asset: validation against the meter (ValidationError, 422,
 * nothing written), delta, review routing. Shared by the Prisma and the raw-SQL write paths.
 */
export function planReading(
  asset: LockedAsset,
  input: CreateHoursInput,
  idempotencyKey: string | null,
  now: Date,
  origin: ReadingOrigin = API_ORIGIN,
): ReadingPlan {
  const loggedAt = input.loggedAt ?? now;
  const errors: Record<string, string> = {};
  if (loggedAt.getTime() > now.getTime() + FUTURE_SKEW_MS) errors.loggedAt = 'cannot be in the future';
  if ((input.lat == null) !== (input.lng == null))
    errors[input.lat == null ? 'lat' : 'lng'] = 'lat and lng go together';
  const metered = asset.meterType !== 'NONE';
  if (metered && input.hoursReading === undefined)
    errors.hoursReading = `is required (this asset's meter is ${asset.meterType})`;
  if (!metered && input.hoursReading !== undefined)
    errors.hoursReading = 'must be omitted: this asset has no meter (meterType NONE); send a state-only entry';
  if (!metered && !input.state) errors.state = 'is required for assets without a meter (meterType NONE)';

  const reading = metered ? (input.hoursReading ?? 0) : 0;
  const previous =
    metered && asset.lastMeterReading !== null && asset.lastMeterAt !== null
      ? { reading: asset.lastMeterReading, at: asset.lastMeterAt }
      : null;
  const delta = previous ? roundMeter(reading - previous.reading) : 0;
  if (metered && delta < 0 && !input.note) {
    errors.note = `is required to explain a reading lower than the previous one (${previous!.reading} ${asset.meterUnit})`;
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);

  const reviewReason = metered
    ? reviewReasonFor(asset.meterType as 'HOURS' | 'ODOMETER', reading, previous, loggedAt, asset.meterUnit)
    : null;
  return {
    metered,
    pmCheck:
      metered && !reviewReason && servicePointReached(reading, asset.pmInterval, asset.pmBaselineReading) !== null,
    values: {
      projectId: input.projectId ?? null,
      loggedByDeviceId: input.loggedByDeviceId ?? null,
      hoursReading: reading,
      delta,
      state: input.state ?? null,
      fuelVolume: input.fuelVolume ?? null,
      fuelUnit: input.fuelUnit ?? (input.fuelVolume != null ? 'GALLON' : null),
      fuelCostTotal: input.fuelCostTotal ?? null,
      note: input.note ?? null,
      lat: input.lat ?? null,
      lng: input.lng ?? null,
      clientMutationId: idempotencyKey,
      reviewStatus: reviewReason ? 'PENDING' : 'NONE',
      reviewReason,
      source: origin.source,
      sourceId: origin.id,
      loggedAt,
    },
  };
}

/** Strips the outbox flag from a recordLogStatement row; `signal` runs when deliveries were queued. */
export function logAndSignal(
  row: MeterLog & { outboxNotified?: string | null },
  signal: () => void,
): { log: MeterLog } {
  const { outboxNotified, ...log } = row;
  if (outboxNotified != null) signal();
  return { log: log as MeterLog };
}

/** hours.logged of a new log, checked against the catalog: the one payload of every reading path. */
export function hoursLoggedEvent(
  ctx: RequestContext,
  assetId: string,
  logId: string,
  v: NewLog,
  autoFlagId: string | null,
) {
  return outboxEvent('hours.logged', {
    logId,
    assetId,
    hoursReading: v.hoursReading,
    delta: v.delta,
    state: v.state,
    projectId: v.projectId,
    reviewStatus: v.reviewStatus,
    reviewReason: v.reviewReason,
    loggedById: ctx.actorId,
    loggedAt: v.loggedAt.toISOString(),
    autoFlagId,
    source: v.source,
    sourceId: v.sourceId,
  });
}

/**
 * The log, the asset's last reading (metered assets) and hours.logged with its deliveries, in one statement:
 * the only write of the transaction that holds the asset lock, so the lock is held for one round trip.
 * `guarded` is for a statement run without the lock (recordReadingOptimistic): the asset is updated only if
 * every field the plan was computed from is still what was read, and nothing is written otherwise.
 */
export function recordLogStatement(
  ctx: RequestContext,
  asset: LockedAsset,
  plan: ReadingPlan,
  autoFlagId: string | null,
  guarded = false,
) {
  const v = plan.values;
  const id = randomUUID();
  const { eventId, payload } = hoursLoggedEvent(ctx, asset.id, id, v, autoFlagId);
  const params: unknown[] = [
    id,
    ctx.orgId,
    asset.id,
    v.projectId,
    ctx.actorId,
    v.loggedByDeviceId,
    v.hoursReading,
    v.delta,
    v.state,
    v.fuelVolume,
    v.fuelUnit,
    v.fuelCostTotal,
    v.note,
    v.lat,
    v.lng,
    v.clientMutationId,
    v.reviewStatus,
    v.reviewReason,
    autoFlagId,
    v.loggedAt,
    plan.metered,
    eventId,
    'hours.logged',
    JSON.stringify(payload),
    v.source,
    v.sourceId,
  ];
  if (!guarded) return { sql: RECORD_LOG_SQL, params };
  params.push(
    asset.meterType,
    asset.meterUnit,
    asset.lastMeterReading,
    asset.lastMeterAt,
    asset.pmInterval,
    asset.pmBaselineReading,
  );
  return { sql: GUARDED_RECORD_LOG_SQL, params };
}

const recordLogSql = (guard: string, from: string) => `
  WITH moved AS (
    UPDATE assets SET "lastMeterReading" = $7::float8, "lastMeterAt" = $20::timestamptz, "updatedAt" = now()
    WHERE id = $3 AND $21::boolean${guard}
    RETURNING id
  ),
  log AS (
    INSERT INTO meter_logs (id, "orgId", "assetId", "projectId", "loggedById", "loggedByDeviceId", "hoursReading", delta, state,
      "fuelVolume", "fuelUnit", "fuelCostTotal", note, lat, lng, "clientMutationId", "reviewStatus", "reviewReason", "autoFlagId", "loggedAt", source, "sourceId")
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::float8, $8::float8, $9::text, $10::float8, $11::text,
      $12::float8, $13::text, $14::float8, $15::float8, $16::text, $17::"ReviewStatus", $18::text, $19::text, $20::timestamptz,
      $25::text, $26::text${from}
    RETURNING *
  ),
  ${outboxCtes({ eventId: '$22', orgId: '$2', type: '$23', data: '$24::jsonb', from: 'log' })}
  SELECT log.*, ${OUTBOX_NOTIFIED} FROM log`;

const RECORD_LOG_SQL = recordLogSql('', '');
// Without the lock an UPDATE that waited for a concurrent reading re-checks these on the row it then sees
// (READ COMMITTED), so a plan made from a stale read writes nothing; so does an accepted reading that reached a
// service reminder's meter alert created after the read (the caller then takes the path that applies it).
export const GUARDED_RECORD_LOG_SQL = recordLogSql(
  `
      AND "meterType"::text = $27 AND "meterUnit" = $28 AND "lastMeterReading" IS NOT DISTINCT FROM $29::float8
      AND "lastMeterAt" IS NOT DISTINCT FROM $30::timestamptz AND "pmInterval" IS NOT DISTINCT FROM $31::float8
      AND "pmBaselineReading" IS NOT DISTINCT FROM $32::float8
      AND ${noReminderAlertSql('$17', '$3', '$7')}`,
  ' FROM moved',
);
