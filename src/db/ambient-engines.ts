import type pg from 'pg';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { currentAmbient, savepoint, type Ambient, type AmbientEngine } from './ambient.ts';
import { currentRequestScope, DatabaseUnavailableError } from './request-scope.ts';
import { currentReadScope, type ReadScope } from './read-scope.ts';
import type { ReplicaSet } from './replicas.ts';

/** database.ts's SqlQuery (restated: database.ts imports this file). */
interface SqlQuery {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], prepare?: string): Promise<T[]>;
}

type PgQuery = (...args: unknown[]) => Promise<unknown>;

/** The ambient transaction on PostgreSQL: one pool connection between BEGIN and COMMIT. */
export function pgAmbientEngine(pool: pg.Pool): AmbientEngine<pg.PoolClient> {
  return {
    async begin() {
      const conn = await pool.connect();
      try {
        await conn.query('BEGIN');
      } catch (err) {
        conn.release(true);
        throw err;
      }
      // As in rawTransaction: a connection whose COMMIT or ROLLBACK failed is discarded, never reused.
      const finish = async (sql: string) => {
        try {
          await conn.query(sql);
        } catch (err) {
          conn.release(true);
          throw err;
        }
        conn.release();
      };
      return {
        handle: conn,
        commit: () => finish('COMMIT'),
        rollback: () => finish('ROLLBACK'),
        // fn may still hold the connection: reset it (the server rolls back) and discard it, so that it is never
        // handed to another request while fn's late queries could still reach it (they are refused).
        abandon: async () => {
          (conn as unknown as { abort?: (reason: string) => void }).abort?.('request deadline passed');
          conn.release(true);
        },
      };
    },
  };
}

/**
 * A connection handed to Prisma's interactive transaction inside the ambient one: its BEGIN, COMMIT and
 * ROLLBACK become a savepoint, its release is a no-op (the ambient transaction owns the connection).
 */
function nestedPgConnection(ambient: Ambient<pg.PoolClient>, conn: pg.PoolClient) {
  let name: string | null = null;
  const translate = (text: string): string => {
    const verb = text.trim().toUpperCase();
    if (verb === 'BEGIN') return `SAVEPOINT ${(name = ambient.nextSavepoint())}`;
    if (verb === 'COMMIT' && name) return `RELEASE SAVEPOINT ${name}`;
    if (verb === 'ROLLBACK' && name) return `ROLLBACK TO SAVEPOINT ${name}`;
    return text;
  };
  return {
    query: (config: unknown, ...rest: unknown[]) => {
      if (typeof config === 'string') return (conn.query as PgQuery)(translate(config), ...rest);
      const c = config as { text: string };
      return (conn.query as PgQuery)({ ...c, text: translate(c.text) }, ...rest);
    },
    release: () => {},
    on: () => {},
    removeListener: () => {},
  };
}

export type RoutedPool = pg.Pool & {
  /** Inside an ambient transaction: fn on its connection under a savepoint; otherwise null. */
  nestedTransaction<T>(fn: (conn: SqlQuery) => Promise<T>): Promise<{ result: T } | null>;
};

// pg-pool hands a waiting caller its connection from inside the release() of whoever freed it, so its own
// query() runs the statement in that other request's async context, under the other request's deadline.
// Awaiting connect() here resumes in the caller's context: the statement runs under its own request scope.
export async function queryInCallersContext(pool: pg.Pool, args: unknown[]): Promise<unknown> {
  const conn = await pool.connect();
  let failed: Error | undefined;
  try {
    return await (conn.query as PgQuery)(...args);
  } catch (err) {
    failed = err as Error;
    throw err;
  } finally {
    conn.release(failed); // as pool.query(): a connection whose query failed is not reused
  }
}

/**
 * A statement of a read scope outside any transaction: on the replica chosen for the scope, or on the primary.
 * A replica that fails it (gone, conflict with recovery, a write it refuses) hands it and the rest of the scope to
 * the primary: a read never fails because of a replica.
 */
async function readStatement(pool: pg.Pool, replicas: ReplicaSet, scope: ReadScope, args: unknown[]) {
  const target = await replicas.target(scope);
  if (!target) return queryInCallersContext(pool, args);
  try {
    return await target.query(args);
  } catch (err) {
    replicas.failed(target, err);
    scope.target = Promise.resolve(null);
    // 25006: a statement that writes; its organisation's position is recorded before the answer (read-routing.ts).
    if ((err as { code?: string }).code === '25006') scope.wrote = true;
    return queryInCallersContext(pool, args);
  }
}

/**
 * The pool as Prisma's adapter and the raw runner see it: queries go to the ambient connection when one is open,
 * and those of a read scope (no transaction) to a replica when `replicas` are configured.
 */
export function ambientPool(pool: pg.Pool, replicas: ReplicaSet | null = null): RoutedPool {
  const onConnection = async (conn: pg.PoolClient) => ({
    query: async <T>(text: string, params: unknown[] = [], prepare?: string) =>
      (await conn.query(prepare ? { name: prepare, text, values: params } : { text, values: params })).rows as T[],
  });
  const extra = {
    query: (...args: unknown[]) => {
      const ambient = currentAmbient<pg.PoolClient>();
      if (ambient) return ambient.handle().then((conn) => (conn.query as PgQuery)(...args));
      if (typeof args[args.length - 1] === 'function') return (pool.query as PgQuery)(...args);
      const read = replicas && currentReadScope();
      if (read) return readStatement(pool, replicas, read, args);
      return queryInCallersContext(pool, args);
    },
    connect: async () => {
      const ambient = currentAmbient<pg.PoolClient>();
      if (!ambient) return pool.connect();
      return nestedPgConnection(ambient, await ambient.handle());
    },
    nestedTransaction: async <T>(fn: (conn: SqlQuery) => Promise<T>) => {
      const ambient = currentAmbient<pg.PoolClient>();
      if (!ambient) return null;
      const conn = await ambient.handle();
      return {
        result: await savepoint(
          ambient,
          (sql) => conn.query(sql),
          async () => fn(await onConnection(conn)),
        ),
      };
    },
  };
  return new Proxy(pool, {
    get(target, prop) {
      if (prop in extra) return extra[prop as keyof typeof extra];
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as RoutedPool;
}

/** PGlite work started through this module and not finished, per client: is a new statement going to wait? */
const inFlight = new WeakMap<PGlite, { n: number }>();
const counterOf = (client: PGlite) => {
  let c = inFlight.get(client);
  if (!c) inFlight.set(client, (c = { n: 0 }));
  return c;
};
async function tracked<T>(client: PGlite, work: () => Promise<T>): Promise<T> {
  const counter = counterOf(client);
  counter.n += 1;
  try {
    return await work();
  } finally {
    counter.n -= 1;
  }
}

/**
 * The ambient transaction on PGlite: a PGlite transaction held open until the ambient one finishes. PGlite
 * has one connection, so every other transaction (and query) waits for it, exactly as for any transaction.
 */
export function pgliteAmbientEngine(client: PGlite): AmbientEngine<Transaction> {
  return {
    begin: () =>
      new Promise((resolve, reject) => {
        let finish: (commit: boolean) => void = () => {};
        const decided = new Promise<boolean>((r) => (finish = r));
        const done = tracked(client, () =>
          client.transaction(async (tx) => {
            resolve({
              handle: tx,
              commit: async () => {
                finish(true);
                await done;
              },
              rollback: async () => {
                finish(false);
                await done;
              },
              // One connection, in this process: rolling back frees it; fn's late queries are refused.
              abandon: async () => {
                finish(false);
                await done;
              },
            });
            if (!(await decided)) await tx.rollback();
          }),
        );
        done.catch(reject);
      }),
  };
}

/**
 * What the guarded pg client does for PostgreSQL: work of a request past its deadline is refused, and work that
 * was waiting for PGlite's one connection when the deadline passed never commits (PGlite runs in this process, so
 * there is no connection to reset; a request answered with an error must never commit afterwards).
 */
function refuseIfExpired(): void {
  if (currentRequestScope()?.expired)
    throw new DatabaseUnavailableError('database work refused: request deadline passed');
}

/**
 * A request's statement that will have to wait for the connection runs in a transaction checked when its turn
 * comes and again before it commits: its request may have been answered with an error meanwhile. A statement
 * that starts at once (nothing ahead of it, the common case) runs as it is: a transaction around it would
 * double its cost.
 */
function statement<T>(client: PGlite, run: (on: Pick<Transaction, 'query' | 'exec'>) => Promise<T>): Promise<T> {
  if (counterOf(client).n === 0 || !currentRequestScope()) return tracked(client, () => run(client));
  return tracked(client, () =>
    client.transaction(async (tx) => {
      refuseIfExpired();
      const result = await run(tx);
      refuseIfExpired();
      return result;
    }),
  );
}

/** The PGlite client as Prisma's adapter and the raw runner see it: routed to the ambient transaction if open. */
export function ambientPglite(client: PGlite): PGlite {
  const extra = {
    query: async (...args: Parameters<PGlite['query']>) => {
      refuseIfExpired();
      const ambient = currentAmbient<Transaction>();
      if (!ambient) return statement(client, (on) => on.query(...args));
      return (await ambient.handle()).query(...args);
    },
    exec: async (...args: Parameters<PGlite['exec']>) => {
      refuseIfExpired();
      const ambient = currentAmbient<Transaction>();
      if (!ambient) return statement(client, (on) => on.exec(...args));
      return (await ambient.handle()).exec(...args);
    },
    transaction: async <T>(fn: (tx: Transaction) => Promise<T>) => {
      refuseIfExpired();
      const ambient = currentAmbient<Transaction>();
      if (!ambient)
        return tracked(client, () =>
          client.transaction(async (tx) => {
            refuseIfExpired(); // its turn may come after the deadline
            const result = await fn(tx);
            refuseIfExpired(); // before PGlite commits
            return result;
          }),
        );
      const tx = await ambient.handle();
      return savepoint(
        ambient,
        (sql) => tx.query(sql),
        (rollback) =>
          fn({
            query: tx.query.bind(tx),
            sql: tx.sql.bind(tx),
            exec: tx.exec.bind(tx),
            listen: tx.listen.bind(tx),
            rollback: async () => rollback(),
            get closed() {
              return tx.closed;
            },
          } as Transaction),
      );
    },
  };
  return new Proxy(client, {
    get(target, prop) {
      if (prop in extra) return extra[prop as keyof typeof extra];
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
