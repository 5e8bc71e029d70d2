// What each imported type provides to the import runner: its fields, how rows find what they update or refer to
// (one query per batch of rows), how they are written through the type's own operations, and how they roll back.
import type { Database } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext, Scope } from '../../core/context.ts';
import type { BillingSync } from '../../jobs/billing-sync.ts';
import type { HoursBatchRecorder } from '../hours/hours-batch.operations.ts';
import type { FieldSpec, RowError, Settings } from './import-fields.rules.ts';
import type { RowAction } from './imports.schemas.ts';

export interface PreparedRow {
  rowNumber: number;
  values: Record<string, unknown>;
}

export interface Decision {
  action: RowAction;
  targetId: string | null;
  /** What identifies the record the row creates or changes: two rows of a file with one key are refused. */
  key: string | null;
  error: RowError | null;
}

export interface StoredRow extends PreparedRow {
  action: RowAction;
  targetId: string | null;
}

export interface Written {
  rowNumber: number;
  resultId: string;
  prior: unknown;
  writtenUpdatedAt: Date | null;
}

export interface HandlerDeps {
  db: Database;
  hours: HoursBatchRecorder;
  billing: Pick<BillingSync, 'schedule'>;
}

/** A row's write no longer does what validation predicted: the commit stops and undoes what it wrote. */
export class PredictionMismatch extends Error {
  constructor(
    readonly rowNumber: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ImportHandler {
  scope: Scope;
  fields: readonly FieldSpec[];
  /** Columns the file must have: each entry lists alternatives, one of which must be there. */
  required(s: Settings): string[][];
  /** The decision of each row of a batch (same order), from the database as it is now. */
  resolve(db: Database, ctx: RequestContext, rows: PreparedRow[], s: Settings): Promise<Decision[]>;
  /** Rules across the rows of the file, once every row is decided (set-based, in SQL). */
  afterValidate?(db: Database, ctx: RequestContext, importId: string, header: (field: string) => string): Promise<void>;
  /** SQL order of import_rows in which rows are written. */
  writeOrder: string;
  /** Batches written at once (rows independent of each other); 1 when order matters. */
  parallelBatches?: number;
  /** Rows per batch, when the type writes a batch in fewer statements than one per row. */
  writeBatch?: number;
  /** Writes rows (create or update) and marks them written, in the type's transactions. */
  write(deps: HandlerDeps, ctx: RequestContext, importId: string, rows: StoredRow[]): Promise<void>;
  /** Undoes the written rows of the import in `tx`; throws 409 when one changed since. */
  rollback(tx: Tx, ctx: RequestContext, importId: string): Promise<void>;
  /** After a rollback committed: what the type's API does after its own deletes (the billing count of assets). */
  afterRollback?(deps: Pick<HandlerDeps, 'billing'>, ctx: RequestContext): void;
}
