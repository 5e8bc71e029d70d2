import { createLazyContext } from '../core/lazy-context.ts';
import { currentRequestScope, DatabaseUnavailableError } from './request-scope.ts';

/**
 * An ambient transaction: every database access made in one async context (an idempotent request's
 * handler) joins one transaction, so the change and the idempotency record that guards it commit together.
 * The engines' entry points (the pg pool and the PGlite client, as Prisma's adapter, the raw runner and
 * rawTransaction see them) are wrapped to route to it while it is open; transactions begun inside it become
 * savepoints, so a nested transaction that fails still rolls back alone, as it would on its own.
 */
export interface Ambient<H = unknown> {
  /** The engine's transaction handle (a pg client after BEGIN, a PGlite transaction), opened at first use. */
  handle(): Promise<H>;
  /** Hooks of nested transactions and background work: run once the ambient transaction commits. */
  readonly afterCommit: (() => void)[];
  /** Savepoint names are numbered per ambient transaction. */
  nextSavepoint(): string;
  /** Set once fn settled: late work of the context (an un-awaited query, a hook) no longer joins it. */
  closed: boolean;
}

const storage = createLazyContext<Ambient>();

export function currentAmbient<H>(): Ambient<H> | undefined {
  const ambient = storage.current() as Ambient<H> | undefined;
  // After COMMIT or ROLLBACK its connection belongs to the pool again: late work must not touch it.
  return ambient && !ambient.closed ? ambient : undefined;
}

/** Runs fn outside any ambient transaction (work that must not join it, e.g. after-commit side work). */
export function outsideAmbient<T>(fn: () => T): T {
  return storage.exit(fn);
}

/** The engine's part: open a transaction and hand back its handle, and how to finish it. */
export interface AmbientEngine<H> {
  begin(): Promise<{
    handle: H;
    commit(): Promise<void>;
    rollback(): Promise<void>;
    /** At the request's deadline, while fn may still hold the handle: end it so that no one can use it again. */
    abandon(): Promise<void>;
  }>;
}

/**
 * Runs fn in an ambient transaction opened lazily at its first query (work before it, e.g. a DNS check,
 * holds no transaction), committed when fn resolves and rolled back when it throws. After-commit hooks run
 * once the commit is done, outside the ambient context.
 *
 * The request's deadline ends the transaction at once (rolled back), whatever fn is doing: on PGlite its one
 * connection would otherwise stay taken until fn settles, and a request answered with an error must never
 * commit afterwards. fn's later queries are refused (they are past the deadline), and fn resolving after the
 * deadline commits nothing.
 */
export async function runAmbient<H, T>(engine: AmbientEngine<H>, fn: () => Promise<T>): Promise<T> {
  const state: { opened: ReturnType<AmbientEngine<H>['begin']> | null } = { opened: null };
  let savepoints = 0;
  const ambient: Ambient<H> = {
    handle: async () => (await (state.opened ??= engine.begin())).handle,
    afterCommit: [],
    nextSavepoint: () => `ambient_sp_${++savepoints}`,
    closed: false,
  };
  let ending: Promise<void> | null = null;
  const end = (how: 'commit' | 'rollback' | 'abandon') =>
    (ending ??= (async () => {
      ambient.closed = true;
      if (!state.opened) return;
      const t = await state.opened;
      await t[how]();
    })());
  const scope = currentRequestScope();
  const onDeadline = { abort: () => void end('abandon').catch(() => {}) };
  scope?.active.add(onDeadline);
  let result: T;
  try {
    try {
      result = await storage.run(ambient as Ambient, fn);
    } catch (err) {
      await end('rollback').catch(() => {});
      throw err;
    }
    if (scope?.expired) {
      await end('rollback').catch(() => {});
      throw new DatabaseUnavailableError('database work refused: request deadline passed');
    }
    await end('commit');
  } finally {
    scope?.active.delete(onDeadline);
  }
  outsideAmbient(() => {
    for (const hook of ambient.afterCommit) hook();
  });
  return result;
}

/**
 * A nested transaction inside the ambient one: a savepoint, released on success, rolled back to when fn
 * throws or asks for a rollback.
 */
export async function savepoint<T>(
  ambient: Ambient,
  exec: (sql: string) => Promise<unknown>,
  fn: (rollback: () => void) => Promise<T>,
): Promise<T> {
  const name = ambient.nextSavepoint();
  await exec(`SAVEPOINT ${name}`);
  let rolledBack = false;
  let result: T;
  try {
    result = await fn(() => {
      rolledBack = true;
    });
  } catch (err) {
    await exec(`ROLLBACK TO SAVEPOINT ${name}`);
    throw err;
  }
  await exec(rolledBack ? `ROLLBACK TO SAVEPOINT ${name}` : `RELEASE SAVEPOINT ${name}`);
  return result;
}
