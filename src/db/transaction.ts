import type { Prisma } from '../generated/prisma/client.ts';
import type { Database, SqlQuery } from './database.ts';
import { currentAmbient } from './ambient.ts';
import { currentRequestScope, DatabaseUnavailableError } from './request-scope.ts';

export type Tx = Prisma.TransactionClient;

const afterCommitHooks = new WeakMap<object, (() => void)[]>();

/**
 * Runs `hook` once the transaction `tx` has committed (never after a rollback). Outside a transaction opened
 * by transaction() the statement has already committed, so the hook runs at once.
 */
export function afterCommit(tx: Tx, hook: () => void): void {
  const hooks = afterCommitHooks.get(tx);
  if (hooks) hooks.push(hook);
  else hook();
}

/**
 * One use case, one transaction: the state change and the events it emits commit or roll back together.
 * The generous maxWait covers PGlite, which runs one transaction at a time (on PostgreSQL the pool's
 * connect timeout answers first). A transaction can never commit after its request was answered with an
 * error: every query has a deadline that resets the connection (guarded-client.ts), and the request
 * deadline resets the request's connections and refuses its further queries, COMMIT included
 * (request-scope.ts); the server then rolls the transaction back.
 */
export async function transaction<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await db.prisma.$transaction(
    (tx) => {
      afterCommitHooks.set(tx, hooks);
      return fn(tx);
    },
    { maxWait: 15_000, timeout: 30_000 },
  );
  refusedPastDeadline(db);
  runHooks(hooks);
  return result;
}

/**
 * On PGlite a transaction whose request passed its deadline rolls back instead of committing (ambient-engines.ts),
 * but Prisma's PGlite adapter reports the commit as done: its hooks must not run, nor the use case go on.
 */
function refusedPastDeadline(db: Database): void {
  if (db.kind === 'pglite' && currentRequestScope()?.expired)
    throw new DatabaseUnavailableError('database work refused: request deadline passed');
}

/**
 * After-commit hooks of a transaction: at once, or, inside an ambient transaction (where this one was a
 * savepoint), once the ambient transaction commits.
 */
export function runHooks(hooks: (() => void)[]): void {
  const ambient = currentAmbient();
  if (ambient) ambient.afterCommit.push(...hooks);
  else for (const hook of hooks) hook();
}

/** A raw transaction (see sqlTransaction): queries on its connection, and hooks that run after its commit. */
export interface SqlTx extends SqlQuery {
  afterCommit(hook: () => void): void;
}

/**
 * transaction() in raw SQL on the driver, for hot paths where Prisma's interactive transaction is the cost
 * (a round trip per statement plus the adapter's CPU each; docs/adr/0006-raw-sql-reading-path.md). Same
 * guarantees: one connection, commit or rollback as a whole, every statement under the fail-fast deadlines,
 * hooks only after a commit.
 */
export async function sqlTransaction<T>(db: Database, fn: (tx: SqlTx) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await db.rawTransaction((conn) => fn({ query: conn.query, afterCommit: (hook) => hooks.push(hook) }));
  refusedPastDeadline(db);
  runHooks(hooks);
  return result;
}
