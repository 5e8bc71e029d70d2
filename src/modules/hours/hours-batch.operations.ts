// Many readings of one asset, in time order, in one transaction: the rows, meter moves, AUTO_PM flags, reminder moves
// and events that recording them one by one through POST /hours gives, written set-based
// (docs/adr/0086-batched-meter-reading-writes.md). Each reading is planned in memory against the asset as the
// readings before it left it; the rare reading that opens an AUTO_PM flag or reaches a reminder's alert calls the
// same operations as POST /hours (the reminders once the readings up to it are written, since they read them).
import { randomUUID } from 'node:crypto';
import { afterCommit, type Tx } from '../../db/transaction.ts';
import { OUTBOX_NOTIFIED, outboxCtes, signalQueued } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { nextTurn } from '../../core/event-loop.ts';
import { ValidationError, type FieldErrors } from '../../core/errors.ts';
import { applyReading } from '../service-reminders/service-reminders.operations.ts';
import type { CreateHoursInput } from './hours.schemas.ts';
import {
  hoursLoggedEvent,
  noSuchAsset,
  noSuchProject,
  openPmFlagIfDue,
  planReading,
  type NewLog,
  type ReadingOrigin,
  type ReadingPlan,
} from './hours.operations.ts';
import { knownProjects, lockBatchAsset, logIdsByKey, remindersMove, type BatchAsset } from './hours.repository.ts';

/** Readings written per statement: bounded work for the database and the event loop alike. */
const FLUSH_ROWS = 200;
/** Readings planned between two turns of the event loop: requests are served in between. */
const YIELD_EVERY = 50;

export interface BatchReading {
  input: CreateHoursInput;
  /** The reading's idempotency key: a key already recorded returns its log and writes nothing. */
  key: string | null;
}

export interface BatchRecorded {
  logId: string;
  replayed: boolean;
}

/** An entry the rules of POST /hours refuse (what would be a 422): the transaction writes nothing. */
export class BatchEntryError extends Error {
  constructor(
    readonly index: number,
    readonly fieldErrors: FieldErrors,
  ) {
    super(Object.values(fieldErrors).join('; '));
  }
}

/** The hours service's batch path, for writers outside the hours module (imports). */
export type HoursBatchRecorder = (
  ctx: RequestContext,
  assetId: string,
  readings: BatchReading[],
  origin: ReadingOrigin,
) => Promise<BatchRecorded[]>;

/** A log to insert, as a row of the statement's input: the values, the event id and its payload. */
type PendingLog = Omit<NewLog, 'loggedAt'> & {
  /** The log's place in the statement (the order of the rows inserted). */
  n: number;
  id: string;
  loggedAt: string;
  autoFlagId: string | null;
  eventId: string;
  data: unknown;
};

function planOrRefuse(asset: BatchAsset, reading: BatchReading, now: Date, origin: ReadingOrigin, index: number) {
  try {
    return planReading(asset, reading.input, reading.key, now, origin);
  } catch (err) {
    if (err instanceof ValidationError) throw new BatchEntryError(index, err.fieldErrors);
    throw err;
  }
}

/**
 * Records `readings` of one asset in order inside the caller's transaction, holding the asset lock throughout, as
 * POST /hours would record them one after another: results in input order, replays for keys already recorded.
 * The months of the readings must have their partitions (ensureMonths, outside the transaction).
 */
export async function recordAssetReadings(
  tx: Tx,
  ctx: RequestContext,
  assetId: string,
  readings: BatchReading[],
  origin: ReadingOrigin,
  now = new Date(),
): Promise<BatchRecorded[]> {
  let asset = await lockBatchAsset(tx, ctx.orgId, assetId);
  if (!asset) throw new BatchEntryError(0, noSuchAsset().fieldErrors);
  const keys = readings.map((r) => r.key).filter((k): k is string => k !== null);
  const recorded = await logIdsByKey(tx, ctx.orgId, keys);
  const projectIds = [...new Set(readings.map((r) => r.input.projectId).filter((p): p is string => !!p))];
  const projects = await knownProjects(tx, ctx.orgId, projectIds);
  const results: BatchRecorded[] = [];
  let pending: PendingLog[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    await insertLogs(tx, ctx, asset!, pending);
    pending = [];
  };
  for (const [index, reading] of readings.entries()) {
    if (index % YIELD_EVERY === YIELD_EVERY - 1) await nextTurn();
    const replay = reading.key === null ? undefined : recorded.get(reading.key);
    if (replay) {
      results.push({ logId: replay, replayed: true });
      continue;
    }
    if (reading.input.projectId && !projects.has(reading.input.projectId))
      throw new BatchEntryError(index, noSuchProject().fieldErrors);
    const plan: ReadingPlan = planOrRefuse(asset, reading, now, origin, index);
    // The two checks POST /hours makes under the lock, against the asset as the readings before this one left it.
    const opensFlag = plan.pmCheck && !asset.pmOpen;
    const movesReminders = remindersMove(
      { remindersDue: asset.alertAt !== null && plan.values.hoursReading >= asset.alertAt },
      plan,
    );
    let autoFlagId: string | null = null;
    if (opensFlag) {
      // The flag and its event come after the readings before it and before the log that names it, as one by one.
      await flush();
      autoFlagId = await openPmFlagIfDue(tx, ctx, asset, plan.values.hoursReading);
      asset = { ...asset, pmOpen: true };
    }
    const id = randomUUID();
    const { eventId, payload } = hoursLoggedEvent(ctx, assetId, id, plan.values, autoFlagId);
    const loggedAt = plan.values.loggedAt.toISOString();
    pending.push({ ...plan.values, n: pending.length, id, loggedAt, autoFlagId, eventId, data: payload });
    results.push({ logId: id, replayed: false });
    if (reading.key !== null) recorded.set(reading.key, id);
    if (plan.metered)
      asset = { ...asset, lastMeterReading: plan.values.hoursReading, lastMeterAt: plan.values.loggedAt };
    if (movesReminders) {
      // Reminders read the asset's logs: they are written first, and the reminders' next alert read after.
      await flush();
      await applyReading(tx, ctx, assetId, plan.values);
      asset = (await lockBatchAsset(tx, ctx.orgId, assetId))!;
    } else if (pending.length >= FLUSH_ROWS) await flush();
  }
  await flush();
  return results;
}

/**
 * The pending logs, their hours.logged events with deliveries, and the asset's meter moved to the last of them
 * (metered assets), in one statement: what POST /hours's statement does for one reading, for many.
 */
async function insertLogs(tx: Tx, ctx: RequestContext, asset: BatchAsset, logs: PendingLog[]) {
  const [row] = await tx.$queryRawUnsafe<{ written: number; outboxNotified: string | null }[]>(
    INSERT_LOGS_SQL,
    ctx.orgId,
    asset.id,
    ctx.actorId,
    JSON.stringify(logs),
    asset.lastMeterReading,
    asset.lastMeterAt,
    asset.meterType !== 'NONE',
  );
  if (Number(row?.written) !== logs.length) throw new Error(`wrote ${row?.written} of ${logs.length} meter logs`);
  if (row?.outboxNotified != null) afterCommit(tx, signalQueued);
}

const INSERT_LOGS_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($4::jsonb) AS r(n int, id text, "projectId" text, "loggedByDeviceId" text,
      "hoursReading" float8, delta float8, state text, "fuelVolume" float8, "fuelUnit" text, "fuelCostTotal" float8,
      note text, lat float8, lng float8, "clientMutationId" text, "reviewStatus" text, "reviewReason" text,
      "autoFlagId" text, "loggedAt" timestamptz, source text, "sourceId" text, "eventId" text, data jsonb)
  ),
  moved AS (
    UPDATE assets SET "lastMeterReading" = $5::float8, "lastMeterAt" = $6::timestamptz, "updatedAt" = now()
    WHERE "orgId" = $1 AND id = $2 AND $7::boolean
    RETURNING id
  ),
  log AS (
    INSERT INTO meter_logs (id, "orgId", "assetId", "projectId", "loggedById", "loggedByDeviceId", "hoursReading", delta, state,
      "fuelVolume", "fuelUnit", "fuelCostTotal", note, lat, lng, "clientMutationId", "reviewStatus", "reviewReason", "autoFlagId", "loggedAt", source, "sourceId")
    SELECT r.id, $1::text, $2::text, r."projectId", $3::text, r."loggedByDeviceId", r."hoursReading", r.delta, r.state,
      r."fuelVolume", r."fuelUnit", r."fuelCostTotal", r.note, r.lat, r.lng, r."clientMutationId",
      r."reviewStatus"::"ReviewStatus", r."reviewReason", r."autoFlagId", r."loggedAt", r.source, r."sourceId"
    FROM input r ORDER BY r.n
    RETURNING 1
  ),
  ${outboxCtes({ eventId: 'r."eventId"', orgId: '$1', type: `'hours.logged'`, data: 'r.data', from: 'input r' })}
  SELECT (SELECT count(*) FROM log)::int AS written, ${OUTBOX_NOTIFIED}`;
