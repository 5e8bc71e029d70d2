// The dry run: the file read into rows (streamed, stored in batches), then each batch of rows read into values and
// decided (create, update, unchanged or error) with one lookup per batch, writing nothing but the import's rows.
import type { Database } from '../../db/database.ts';
import type { Import } from '../../generated/prisma/client.ts';
import { FileReadError, readCsv } from './import-csv.adapter.ts';
import { readRow, settle, type RowError } from './import-fields.rules.ts';
import type { ImportHandler } from './import-handler.operations.ts';
import { importContext } from './import-lifecycle.operations.ts';
import { mapColumns } from './import-values.rules.ts';
import {
  countActions,
  insertRawRows,
  rowsAfter,
  saveDecisions,
  setProgress,
  type DecidedRow,
} from './imports.repository.ts';
import type { ImportCounts, ImportOptionsInput } from './imports.schemas.ts';

export const BATCH_ROWS = 1000;

/** Reason a file cannot be imported as its type: the import fails with it. */
export class ImportFileError extends Error {}

/**
 * Stores the records of the file as the import's rows, the header apart. Throws ImportFileError when the file is
 * not CSV, not in a readable encoding, or lacks a column the type requires (one error naming it).
 */
export async function readFileRows(
  db: Database,
  imp: Import,
  handler: ImportHandler,
  source: AsyncIterable<Buffer>,
  keepGoing: () => boolean,
): Promise<number> {
  const settings = settle(imp.options as ImportOptionsInput);
  let delimiter = settings.delimiter;
  let headers: string[] | null = null;
  let total = 0;
  try {
    for await (const batch of readCsv(source, settings.delimiter, BATCH_ROWS, (d) => (delimiter = d))) {
      if (!keepGoing()) throw new ImportFileError('the server stopped while the file was being read');
      let records = batch;
      if (!headers) {
        headers = records[0]!.fields.map((h) => h.trim());
        records = records.slice(1);
        const missing = missingColumns(handler, headers, imp.mapping as Record<string, string | null>, settings);
        if (missing) throw new ImportFileError(missing);
        await db.prisma.import.update({ where: { id: imp.id }, data: { headers, delimiter } });
      }
      await insertRawRows(db.sql, imp.orgId, imp.id, records);
      total += records.length;
    }
  } catch (err) {
    if (err instanceof FileReadError) throw new ImportFileError(err.message);
    throw err;
  }
  if (!headers) throw new ImportFileError('the file is empty');
  if (total === 0) throw new ImportFileError('the file has a header but no rows');
  await db.prisma.import.update({ where: { id: imp.id }, data: { readComplete: true, rowsTotal: total } });
  return total;
}

function missingColumns(
  handler: ImportHandler,
  headers: string[],
  mapping: Record<string, string | null>,
  settings: ReturnType<typeof settle>,
): string | null {
  const columns = mapColumns(
    headers,
    handler.fields.map((f) => f.name),
    mapping,
  );
  for (const group of handler.required(settings))
    if (!group.some((f) => columns.has(f)))
      return `the file has no column for ${group.join(' or ')} (headers: ${headers.filter((h) => h).join(', ')})`;
  return null;
}

/** Decides every row of a read file, batch by batch; rows already decided are decided again (a resumed run). */
export async function validateRows(
  db: Database,
  imp: Import,
  handler: ImportHandler,
  keepGoing: () => boolean,
): Promise<ImportCounts | null> {
  const ctx = importContext(imp);
  const settings = settle(imp.options as ImportOptionsInput);
  const headers = imp.headers as string[];
  const columns = mapColumns(
    headers,
    handler.fields.map((f) => f.name),
    imp.mapping as Record<string, string | null>,
  );
  const header = (field: string) => {
    const index = columns.get(field);
    return index === undefined ? field : headers[index]!;
  };
  const seen = new Map<string, number>();
  let after = 0;
  let done = 0;
  for (;;) {
    if (!keepGoing()) return null;
    const batch = await rowsAfter(db.sql, imp.orgId, imp.id, after, BATCH_ROWS);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.rowNumber;
    const read = batch.map((r) => ({
      rowNumber: r.rowNumber,
      ...readRow(r.raw, headers, columns, handler.fields, settings),
    }));
    const good = read.filter((r) => r.error === null);
    const decisions = await handler.resolve(db, ctx, good, settings);
    const decided = new Map(good.map((r, i) => [r.rowNumber, decisions[i]!]));
    const out: DecidedRow[] = read.map((r) => {
      const d = decided.get(r.rowNumber);
      if (!d)
        return { rowNumber: r.rowNumber, values: r.values, action: 'error', targetId: null, key: null, error: r.error };
      if (d.error) return { ...d, rowNumber: r.rowNumber, values: r.values, error: withHeader(d.error, header) };
      if (d.key !== null) {
        const first = seen.get(d.key);
        if (first !== undefined)
          return {
            rowNumber: r.rowNumber,
            values: r.values,
            action: 'error',
            targetId: d.targetId,
            key: d.key,
            error: {
              code: 'duplicate_in_file',
              column: null,
              value: null,
              message: `row ${first} of the file already has this ${keyName(d.key)}; a record is imported once`,
            },
          };
        seen.set(d.key, r.rowNumber);
      }
      return { ...d, rowNumber: r.rowNumber, values: r.values };
    });
    await saveDecisions(db.sql, imp.orgId, imp.id, out);
    done += batch.length;
    await setProgress(db, imp.id, done);
  }
  await handler.afterValidate?.(db, ctx, imp.id, header);
  return countActions(db.sql, imp.orgId, imp.id);
}

const withHeader = (e: RowError, header: (f: string) => string): RowError => ({
  ...e,
  column: e.column === null ? null : header(e.column),
});

const keyName = (key: string) => (key.includes(':') ? key.slice(0, key.indexOf(':')) : 'asset and time');
