// Queries on imports, their rows and saved mappings. Row writes go in multi-row statements (one per batch).
import type { Database, SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { Import } from '../../generated/prisma/client.ts';
import type { CsvRecord } from './import-csv.adapter.ts';
import type { Decision, StoredRow, Written } from './import-handler.operations.ts';
import type { ImportCounts, RowAction } from './imports.schemas.ts';

type Raw = Pick<Tx, '$executeRawUnsafe' | '$queryRawUnsafe'>;

/** Stores the records of a batch as rows to validate (one INSERT). */
export async function insertRawRows(sql: SqlRunner, orgId: string, importId: string, records: CsvRecord[]) {
  if (records.length === 0) return;
  await sql.query(
    `INSERT INTO import_rows ("orgId", "importId", "rowNumber", raw)
     SELECT $1, $2, r.n, r.raw FROM jsonb_to_recordset($3::jsonb) AS r(n int, raw jsonb)`,
    [orgId, importId, JSON.stringify(records.map((r) => ({ n: r.line, raw: r.fields })))],
  );
}

/** The next batch of rows after `after` in file order. */
export function rowsAfter(sql: SqlRunner, orgId: string, importId: string, after: number, limit: number) {
  return sql.query<{ rowNumber: number; raw: string[] }>(
    `SELECT "rowNumber", raw FROM import_rows WHERE "orgId" = $1 AND "importId" = $2 AND "rowNumber" > $3
     ORDER BY "rowNumber" LIMIT $4`,
    [orgId, importId, after, limit],
  );
}

export interface DecidedRow extends Decision {
  rowNumber: number;
  values: Record<string, unknown> | null;
}

/**
 * Records the decisions of a batch (one UPDATE). The batch's range of row numbers bounds the scan: before ANALYZE
 * the planner takes an import's rows for a handful and would otherwise hash all of them for each batch.
 */
export async function saveDecisions(sql: SqlRunner, orgId: string, importId: string, rows: DecidedRow[]) {
  if (rows.length === 0) return;
  const numbers = rows.map((r) => r.rowNumber);
  await sql.query(
    `UPDATE import_rows i SET "values" = d."values", key = d.key, action = d.action, "targetId" = d."targetId",
       "errorCode" = d.code, "errorColumn" = d.col, "errorValue" = d.val, "errorMessage" = d.msg
     FROM jsonb_to_recordset($3::jsonb) AS d(n int, "values" jsonb, key text, action text, "targetId" text,
       code text, col text, val text, msg text)
     WHERE i."orgId" = $1 AND i."importId" = $2 AND i."rowNumber" = d.n
       AND i."rowNumber" BETWEEN $4 AND $5`,
    [
      orgId,
      importId,
      JSON.stringify(
        rows.map((r) => ({
          n: r.rowNumber,
          values: r.values,
          key: r.key,
          action: r.action,
          targetId: r.targetId,
          code: r.error?.code ?? null,
          col: r.error?.column ?? null,
          val: r.error?.value ?? null,
          msg: r.error?.message ?? null,
        })),
      ),
      Math.min(...numbers),
      Math.max(...numbers),
    ],
  );
}

export async function countActions(sql: SqlRunner, orgId: string, importId: string): Promise<ImportCounts> {
  const rows = await sql.query<{ action: RowAction; n: number }>(
    `SELECT action, count(*)::int AS n FROM import_rows WHERE "orgId" = $1 AND "importId" = $2 GROUP BY action`,
    [orgId, importId],
  );
  const counts: ImportCounts = { rows: 0, create: 0, update: 0, unchanged: 0, error: 0 };
  for (const r of rows) {
    counts.rows += Number(r.n);
    if (r.action in counts) counts[r.action] = Number(r.n);
  }
  return counts;
}

/**
 * Stored rows by row number, with their decisions: one primary-key probe per number (LIMIT 1 keeps it a probe,
 * whatever the planner believes of the import's size).
 */
export async function storedRows(sql: SqlRunner, orgId: string, importId: string, numbers: number[]) {
  const rows = await sql.query<StoredRow>(
    `SELECT r.* FROM unnest($3::int[]) AS k(n) CROSS JOIN LATERAL (
       SELECT "rowNumber", "values", action, "targetId" FROM import_rows
       WHERE "orgId" = $1 AND "importId" = $2 AND "rowNumber" = k.n LIMIT 1) r`,
    [orgId, importId, numbers],
  );
  const byNumber = new Map(rows.map((r) => [r.rowNumber, r]));
  return numbers.map((n) => byNumber.get(n)!).filter(Boolean);
}

/** The rows a commit writes and has not written yet, in the type's write order (numbers only: small). */
export async function unwrittenRows(sql: SqlRunner, orgId: string, importId: string, order: string) {
  const rows = await sql.query<{ rowNumber: number }>(
    `SELECT "rowNumber" FROM import_rows WHERE "orgId" = $1 AND "importId" = $2 AND action IN ('create', 'update')
       AND NOT written ORDER BY ${order}`,
    [orgId, importId],
  );
  return rows.map((r) => r.rowNumber);
}

/** Rows (other than errors) in file order after `after`: what the commit re-checks. */
export function decidedRowsAfter(sql: SqlRunner, orgId: string, importId: string, after: number, limit: number) {
  return sql.query<StoredRow>(
    `SELECT "rowNumber", "values", action, "targetId" FROM import_rows
     WHERE "orgId" = $1 AND "importId" = $2 AND "rowNumber" > $3 AND action <> 'error'
     ORDER BY "rowNumber" LIMIT $4`,
    [orgId, importId, after, limit],
  );
}

/**
 * Marks rows written, with what rollback needs, in the caller's transaction (or alone). Each row is found by a
 * primary-key probe and updated by its ctid: a join would hash every row of the import for each batch.
 */
export async function markWritten(tx: Raw, orgId: string, importId: string, written: Written[]) {
  if (written.length === 0) return;
  await tx.$executeRawUnsafe(
    `UPDATE import_rows i SET written = true, "resultId" = w."resultId", prior = w.prior,
       "writtenUpdatedAt" = w.at
     FROM (SELECT w.*, p.ctid AS row FROM jsonb_to_recordset($3::jsonb) AS w(n int, "resultId" text, prior jsonb,
         at timestamptz)
       CROSS JOIN LATERAL (SELECT ctid FROM import_rows
         WHERE "orgId" = $1 AND "importId" = $2 AND "rowNumber" = w.n LIMIT 1) p) w
     WHERE i.ctid = w.row AND i."orgId" = $1 AND i."importId" = $2 AND i."rowNumber" = w.n`,
    orgId,
    importId,
    JSON.stringify(
      written.map((w) => ({
        n: w.rowNumber,
        resultId: w.resultId,
        prior: w.prior ?? null,
        at: w.writtenUpdatedAt?.toISOString() ?? null,
      })),
    ),
  );
}

export function writtenRows(tx: Raw, orgId: string, importId: string) {
  return tx.$queryRawUnsafe<
    {
      rowNumber: number;
      action: RowAction;
      targetId: string | null;
      resultId: string;
      prior: unknown;
      writtenUpdatedAt: Date | null;
    }[]
  >(
    `SELECT "rowNumber", action, "targetId", "resultId", prior, "writtenUpdatedAt" FROM import_rows
     WHERE "orgId" = $1 AND "importId" = $2 AND written ORDER BY "rowNumber"`,
    orgId,
    importId,
  );
}

export async function clearWritten(tx: Raw, orgId: string, importId: string) {
  await tx.$executeRawUnsafe(
    `UPDATE import_rows SET written = false, "resultId" = NULL, prior = NULL, "writtenUpdatedAt" = NULL
     WHERE "orgId" = $1 AND "importId" = $2 AND written`,
    orgId,
    importId,
  );
}

export interface ErrorRow {
  rowNumber: number;
  raw: string[];
  errorCode: string;
  errorColumn: string | null;
  errorValue: string | null;
  errorMessage: string;
}

export function errorRows(sql: SqlRunner, orgId: string, importId: string, after: number, limit: number) {
  return sql.query<ErrorRow>(
    `SELECT "rowNumber", raw, "errorCode", "errorColumn", "errorValue", "errorMessage" FROM import_rows
     WHERE "orgId" = $1 AND "importId" = $2 AND action = 'error' AND "rowNumber" > $3
     ORDER BY "rowNumber" LIMIT $4`,
    [orgId, importId, after, limit],
  );
}

export function pageRows(sql: SqlRunner, orgId: string, importId: string, after: number, limit: number) {
  return sql.query<{
    rowNumber: number;
    action: RowAction | 'pending';
    targetId: string | null;
    resultId: string | null;
    errorCode: string | null;
    values: Record<string, unknown> | null;
  }>(
    `SELECT "rowNumber", action, "targetId", "resultId", "errorCode", "values" FROM import_rows
     WHERE "orgId" = $1 AND "importId" = $2 AND "rowNumber" > $3 ORDER BY "rowNumber" LIMIT $4`,
    [orgId, importId, after, limit],
  );
}

/** Takes the lease of an import in progress when free or lapsed; false when another process holds it. */
export async function claimImport(db: Database, id: string, owner: string, leaseSec: number): Promise<boolean> {
  const rows = await db.sql.query(
    `UPDATE imports SET "leaseOwner" = $2, "leaseUntil" = now() + make_interval(secs => $3), "updatedAt" = now()
     WHERE id = $1 AND status IN ('validating', 'committing')
       AND ("leaseOwner" = $2 OR "leaseUntil" IS NULL OR "leaseUntil" < now()) RETURNING 1`,
    [id, owner, leaseSec],
  );
  return rows.length > 0;
}

/** Imports in progress whose lease lapsed (their process stopped): the resume sweep's input. */
export function lapsedImports(db: Database, limit: number) {
  return db.sql.query<{ id: string }>(
    `SELECT id FROM imports WHERE status IN ('validating', 'committing') AND ("leaseUntil" IS NULL OR "leaseUntil" < now())
     ORDER BY "createdAt" LIMIT $1`,
    [limit],
  );
}

export async function renewImportLease(db: Database, id: string, owner: string, leaseSec: number) {
  const rows = await db.sql.query(
    `UPDATE imports SET "leaseUntil" = now() + make_interval(secs => $3) WHERE id = $1 AND "leaseOwner" = $2 RETURNING 1`,
    [id, owner, leaseSec],
  );
  return rows.length > 0;
}

export async function setProgress(db: Database, id: string, rowsDone: number, rowsTotal?: number) {
  await db.sql.query(
    `UPDATE imports SET "rowsDone" = $2, "rowsTotal" = COALESCE($3, "rowsTotal"), "updatedAt" = now() WHERE id = $1`,
    [id, rowsDone, rowsTotal ?? null],
  );
}

export const findImport = (db: Database, orgId: string, id: string): Promise<Import | null> =>
  db.prisma.import.findFirst({ where: { id, orgId } });
