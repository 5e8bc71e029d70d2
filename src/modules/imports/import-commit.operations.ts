// The commit: first every row is decided again against the data as it is now and compared with the prediction (any
// difference fails the import with nothing written), then rows are written in batches through the type's own
// writes. A write that finds the data changed undoes what the commit wrote and fails the import.
import type { Database } from '../../db/database.ts';
import { transaction } from '../../db/transaction.ts';
import type { Import } from '../../generated/prisma/client.ts';
import { settle } from './import-fields.rules.ts';
import { PredictionMismatch, type HandlerDeps, type ImportHandler } from './import-handler.operations.ts';
import { failImport, importContext } from './import-lifecycle.operations.ts';
import { clearWritten, decidedRowsAfter, setProgress, storedRows, unwrittenRows } from './imports.repository.ts';
import type { ImportOptionsInput } from './imports.schemas.ts';
import { BATCH_ROWS } from './import-validate.operations.ts';

/** Rows written per batch (each batch one transaction for types written in transactions). */
const WRITE_BATCH = 100;

/** A row of the re-check that would now do something else than predicted: the commit's failure reason. */
export async function recheck(db: Database, imp: Import, handler: ImportHandler, keepGoing: () => boolean) {
  const ctx = importContext(imp);
  const settings = settle(imp.options as ImportOptionsInput);
  let after = 0;
  for (;;) {
    if (!keepGoing()) return 'stopped';
    const rows = await decidedRowsAfter(db.sql, imp.orgId, imp.id, after, BATCH_ROWS);
    if (rows.length === 0) return null;
    after = rows[rows.length - 1]!.rowNumber;
    const now = await handler.resolve(db, ctx, rows, settings);
    for (let i = 0; i < rows.length; i++) {
      const was = rows[i]!;
      const is = now[i]!;
      if (is.action !== was.action || (is.targetId ?? null) !== (was.targetId ?? null))
        return (
          `the data changed since validation: row ${was.rowNumber} was to be ${was.action} and would now be ` +
          `${is.action}${is.error ? ` (${is.error.message})` : ''}; nothing was written`
        );
    }
  }
}

/** Writes the rows not written yet; false when stopped before the end (the commit resumes later). */
export async function writeRows(
  deps: HandlerDeps,
  imp: Import,
  handler: ImportHandler,
  keepGoing: () => boolean,
): Promise<boolean> {
  const { db } = deps;
  const ctx = importContext(imp);
  const numbers = await unwrittenRows(db.sql, imp.orgId, imp.id, handler.writeOrder);
  const total = imp.rowsTotal;
  let done = total - numbers.length;
  const chunks: number[][] = [];
  const size = handler.writeBatch ?? WRITE_BATCH;
  for (let i = 0; i < numbers.length; i += size) chunks.push(numbers.slice(i, i + size));
  let stopped = false;
  // Batches of independent rows run side by side, each its own transaction; the first failure stops the others.
  const worker = async () => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      if (!keepGoing()) {
        stopped = true;
        return;
      }
      const rows = await storedRows(db.sql, imp.orgId, imp.id, chunk);
      try {
        await handler.write(deps, ctx, imp.id, rows);
      } catch (err) {
        chunks.length = 0;
        throw err;
      }
      done += rows.length;
      await setProgress(db, imp.id, done);
    }
  };
  try {
    const workers = Array.from({ length: Math.min(handler.parallelBatches ?? 1, chunks.length) }, worker);
    const results = await Promise.allSettled(workers);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    if (stopped) return false;
  } catch (err) {
    if (!(err instanceof PredictionMismatch)) throw err;
    const undone = await undo(db, imp, handler);
    await failImport(
      db,
      imp,
      `the data changed during the commit: row ${err.rowNumber}: ${err.message}; ` +
        (undone === true ? 'what the commit wrote was undone' : `undoing what it wrote failed (${undone})`),
    );
    return false;
  }
  return true;
}

/** Undoes what the commit wrote so far, in one transaction; true, or the reason it could not. */
async function undo(db: Database, imp: Import, handler: ImportHandler): Promise<true | string> {
  try {
    await transaction(db, async (tx) => {
      await handler.rollback(tx, importContext(imp), imp.id);
      await clearWritten(tx, imp.orgId, imp.id);
    });
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}
