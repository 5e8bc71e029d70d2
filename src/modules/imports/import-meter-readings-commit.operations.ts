// The commit of imported meter readings: the rows of each asset, in time order, go to the hours service's batch path
// (source "import", the row's idempotency key), which applies the rules of POST /hours to each reading in turn, so
// readings open AUTO_PM flags and move service reminders as any other (docs/adr/0086-batched-meter-reading-writes.md).
// A rollback deletes the import's readings while no later reading exists on their assets.
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { nextTurn } from '../../core/event-loop.ts';
import { CreateHoursBody } from '../hours/hours.schemas.ts';
import { BatchEntryError, type BatchReading } from '../hours/hours-batch.operations.ts';
import { PredictionMismatch, type HandlerDeps, type StoredRow, type Written } from './import-handler.operations.ts';
import { rowsChanged } from './import-assets.operations.ts';
import { lockAssetIds } from '../assets/assets.repository.ts';
import { markWritten, writtenRows } from './imports.repository.ts';

/** Rows of a commit batch: a few assets' readings (the write order is by asset), each asset's in a few statements. */
export const WRITE_BATCH = 2_000;
/** Assets written at once, each in a transaction of its own with its readings in time order. */
const PARALLEL_ASSETS = 2;
/** Rows read between two turns of the event loop: requests are served in between. */
const YIELD_EVERY = 200;

/** The key of a reading's idempotency: a resumed commit finds the rows it already wrote. */
export const readingKey = (importId: string, rowNumber: number) => `import:${importId}:${rowNumber}`;

/**
 * Writes a batch of rows asset by asset, marking each asset's rows written once its transaction committed; a reading
 * the rules now refuse stops the commit (PredictionMismatch) with the assets before it written and marked.
 */
export async function writeReadings(
  { db, hours }: HandlerDeps,
  ctx: RequestContext,
  importId: string,
  rows: StoredRow[],
): Promise<void> {
  const groups = new Map<string, StoredRow[]>();
  for (const row of rows) {
    const group = groups.get(row.targetId!);
    if (group) group.push(row);
    else groups.set(row.targetId!, [row]);
  }
  const queue = [...groups.entries()];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [assetId, group] = next;
      const readings: BatchReading[] = [];
      for (const [i, row] of group.entries()) {
        if (i % YIELD_EVERY === YIELD_EVERY - 1) await nextTurn();
        readings.push({
          input: CreateHoursBody.parse({ ...row.values, assetId }),
          key: readingKey(importId, row.rowNumber),
        });
      }
      let logs;
      try {
        logs = await hours(ctx, assetId, readings, { source: 'import', id: importId });
      } catch (err) {
        queue.length = 0;
        if (err instanceof BatchEntryError) throw new PredictionMismatch(group[err.index]!.rowNumber, err.message);
        throw err;
      }
      const written: Written[] = logs.map((log, i) => ({
        rowNumber: group[i]!.rowNumber,
        resultId: log.logId,
        prior: null,
        writtenUpdatedAt: null,
      }));
      await markWritten(db.prisma, ctx.orgId, importId, written);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(PARALLEL_ASSETS, queue.length) }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Deletes the import's readings and moves each asset's meter back; 409 when a later reading exists. */
export async function rollbackReadings(tx: Tx, ctx: RequestContext, importId: string): Promise<void> {
  const rows = await writtenRows(tx, ctx.orgId, importId);
  if (rows.length === 0) return;
  const assets = [...new Set(rows.map((r) => r.targetId!))];
  // Locked in id order: readings of these assets wait, so none lands between the check and the delete.
  await lockAssetIds(tx, ctx.orgId, assets);
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
           LEFT JOIN LATERAL (SELECT "hoursReading", "loggedAt" FROM meter_logs m WHERE m."orgId" = $1 AND m."assetId" = a2.id
             ORDER BY "loggedAt" DESC, id DESC LIMIT 1) last ON true
           WHERE a2.id = ANY($2::text[]) AND a2."orgId" = $1 AND a2."meterType" <> 'NONE') l
     WHERE a."orgId" = $1 AND a.id = l.id`,
    ctx.orgId,
    assets,
  );
}
