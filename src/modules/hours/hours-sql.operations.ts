// The reading path without Prisma's interactive transaction: the same rules and rows as recordReading(), in fewer
// round trips (docs/adr/0006-raw-sql-reading-path.md). The hours service picks the path; a reading these cannot take
// (an AUTO_PM flag, a reminder alert) goes the full way.
import type { MeterLog } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import type { SqlTx } from '../../db/transaction.ts';
import { signalQueued } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import type { CreateHoursInput } from './hours.schemas.ts';
import { ASSET_WITH_PROJECT, findLogByKey, remindersMove, renewalDue, type ReadAsset } from './hours.repository.ts';
import {
  API_ORIGIN,
  logAndSignal,
  noSuchAsset,
  noSuchProject,
  planReading,
  recordLogStatement,
  type ReadingOrigin,
  type RecordedReading,
} from './hours.operations.ts';

/**
 * The common reading in two round trips and no explicit transaction: read the asset, then one statement
 * that moves its meter, inserts the log and queues hours.logged only if the asset still holds what was read
 * (see recordLogStatement's guard); that statement is its own transaction. Returns null, having written
 * nothing, whenever the full rules need the asset lock: a meterless asset, a reading at a service point
 * (the one-open-AUTO_PM check), or a concurrent change of the asset between the read and the write.
 * Idempotency keys are settled by the unique index: a lost race is a unique violation the caller replays.
 */
export async function recordReadingOptimistic(
  sql: SqlRunner,
  ctx: RequestContext,
  input: CreateHoursInput,
  idempotencyKey: string | null,
  origin: ReadingOrigin = API_ORIGIN,
): Promise<RecordedReading | null> {
  const [asset] = await sql.query<ReadAsset>(
    `${ASSET_WITH_PROJECT} FROM assets WHERE id = $1 AND "orgId" = $2`,
    [input.assetId, ctx.orgId, input.projectId ?? null, input.hoursReading ?? null],
    'hours-asset-read',
  );
  if (!asset) throw noSuchAsset();
  if (asset.meterType === 'NONE') return null;
  if (!asset.projectFound) throw noSuchProject();
  const now = new Date();
  const plan = planReading(asset, input, idempotencyKey, now, origin);
  if (plan.pmCheck || remindersMove(asset, plan)) return null;
  const { sql: text, params } = recordLogStatement(ctx, asset, plan, null, true);
  const [row] = await sql.query<MeterLog & { outboxNotified?: string | null }>(text, params, 'hours-record-guarded');
  if (!row) return null;
  return { ...logAndSignal(row, signalQueued), replayed: false, renewalDue: renewalDue(asset, now) };
}

/**
 * recordReading() in raw SQL on the driver (db.sqlTransaction): the same rules and the same rows in four
 * round trips (BEGIN, lock, write, COMMIT) instead of Prisma's interactive transaction, the cost of POST /hours
 * (docs/adr/0006-raw-sql-reading-path.md). Returns null when the reading must open an AUTO_PM flag: that rare
 * case (once per service interval) rolls back and takes the full path, recordReading(), which creates the
 * flag, its event and its notifications through the flags module.
 */
export async function recordReadingSql(
  tx: SqlTx,
  ctx: RequestContext,
  input: CreateHoursInput,
  idempotencyKey: string | null,
  origin: ReadingOrigin = API_ORIGIN,
): Promise<RecordedReading | null> {
  const [asset] = await tx.query<ReadAsset>(
    `${ASSET_WITH_PROJECT} FROM assets WHERE id = $1 AND "orgId" = $2 FOR UPDATE`,
    [input.assetId, ctx.orgId, input.projectId ?? null, input.hoursReading ?? null],
    'hours-asset-lock',
  );
  if (!asset) throw noSuchAsset();
  // Re-checked under the lock, in a statement of its own (a snapshot taken after the lock was granted):
  // identical requests for one asset queue on the lock and find the first one's row.
  if (idempotencyKey) {
    const existing = await findLogByKey(tx, ctx.orgId, idempotencyKey);
    if (existing) return { log: existing, replayed: true };
  }
  if (!asset.projectFound) throw noSuchProject();
  const now = new Date();
  const plan = planReading(asset, input, idempotencyKey, now, origin);
  // A reading that changes a service reminder takes the full path (recordReading), which applies it.
  if (remindersMove(asset, plan)) return null;
  if (plan.pmCheck) {
    // Past a service point with its AUTO_PM flag already open (an overdue asset keeps logging): nothing to open.
    const open = await tx.query(
      `SELECT 1 FROM flags WHERE "orgId" = $1 AND "assetId" = $2 AND severity = 'AUTO_PM' AND status IN ('OPEN', 'IN_PROGRESS') LIMIT 1`,
      [ctx.orgId, asset.id],
    );
    if (open.length === 0) return null;
  }
  const { sql, params } = recordLogStatement(ctx, asset, plan, null);
  const [row] = await tx.query<MeterLog & { outboxNotified?: string | null }>(sql, params, 'hours-record');
  return {
    ...logAndSignal(row, () => tx.afterCommit(signalQueued)),
    replayed: false,
    renewalDue: renewalDue(asset, now),
  };
}
