import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { PGliteOptions } from '@electric-sql/pglite';
import { PrismaClient } from '../generated/prisma/client.ts';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.ts';
import {
  ambientPglite,
  ambientPool,
  pgAmbientEngine,
  pgliteAmbientEngine,
  queryInCallersContext,
} from './ambient-engines.ts';
import { runAmbient } from './ambient.ts';
import { isDirectSession, waitForXactLock, type LockWaitOptions } from './advisory-lock.ts';
import type { ReplicaSet } from './replicas.ts';
import type { WritePositions } from './write-positions.ts';

/** Raw SQL access below Prisma, for the migrator and health checks. */
export interface SqlRunner {
  exec(sql: string): Promise<void>;
  /**
   * `prepare` names a constant statement of a hot path: on a connection where named prepared statements are
   * safe (DatabaseOptions.preparedStatements), PostgreSQL then parses it once per connection instead of on every
   * call; elsewhere the connection sends it unnamed (guarded-client.ts). Never name SQL that is assembled per
   * request.
   */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], prepare?: string): Promise<T[]>;
  /**
   * Runs fn while holding an exclusive cross-process lock (a PostgreSQL advisory lock held by a transaction of
   * its own, so it works through a transaction pooler too). fn gets a dedicated connection without deadlines.
   */
  withExclusiveLock<T>(lockId: number, fn: (sql: SqlRunner) => Promise<T>, options?: LockWaitOptions): Promise<T>;
  /**
   * True when every statement runs on one server session (a direct connection, PGlite): a session SET holds
   * for the next statement. Behind a transaction pooler each transaction may land on another server session.
   */
  pinned?: boolean;
}

export { LockWaitTimeoutError, type LockWaitOptions } from './advisory-lock.ts';

/** Queries on the one connection of a raw transaction. */
export interface SqlQuery {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], prepare?: string): Promise<T[]>;
}

export interface Database {
  kind: 'postgresql' | 'pglite';
  prisma: PrismaClient;
  sql: SqlRunner;
  /**
   * A transaction in raw SQL below Prisma, for hot writes where Prisma's interactive transaction is the cost:
   * fn's queries run on one connection between BEGIN and COMMIT (ROLLBACK when fn throws). Use through
   * sqlTransaction() in transaction.ts, which adds after-commit hooks.
   */
  rawTransaction<T>(fn: (conn: SqlQuery) => Promise<T>): Promise<T>;
  /**
   * Runs fn with all of its database work (Prisma, raw SQL, transaction() and sqlTransaction(), which become
   * savepoints) in one transaction, committed when fn resolves: see ambient.ts.
   */
  ambient<T>(fn: () => Promise<T>): Promise<T>;
  /** Streaming replicas for reads of a read scope (read-scope.ts); null without DATABASE_REPLICA_URLS. */
  replicas: ReplicaSet | null;
  /** Connections in use and configured maximum (PostgreSQL only). */
  poolStats(): { total: number; idle: number; waiting: number; max: number } | null;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Directory for the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  poolSize?: number;
  timeouts?: Partial<DatabaseTimeouts>;
  /**
   * Named prepared statements for the hot paths' `prepare` names. Safe only where a connection is one server
   * session for its whole life: a transaction pooler (PgBouncer 1.18 in transaction mode) runs each transaction on
   * any server connection, where the statement prepared on another is missing ("does not exist") or already there
   * ("already exists"). `auto` (the default): on each connection that proves to be a direct session (see
   * guarded-client.ts); true: on every connection (a pooler that tracks them, PgBouncer 1.21+); false: never.
   */
  preparedStatements?: PreparedStatements;
  /**
   * An in-memory PGlite's start: a file system holding a cluster instead of an empty one, and its WebAssembly module
   * and file-system bundle already loaded (tests open many databases in one process and start each migrated).
   */
  pglite?: Pick<PGliteOptions, 'fs' | 'pgliteWasmModule' | 'fsBundle'>;
  /** PostgreSQL only: replicas for reads that tolerate lag, each opened with the primary's pool settings. */
  replicas?: ReplicaOptions;
}

export interface ReplicaOptions {
  urls: string[];
  maxLagMs: number;
  /** Where organisations' last write positions are kept (Redis across processes, memory in one). */
  positions: WritePositions;
  onError?(message: string, err: unknown): void;
}

/** Every wait on PostgreSQL is bounded (PGlite runs in-process and has no network to wait on). */
export interface DatabaseTimeouts {
  /** Opening a connection, and waiting for a free one in the pool. */
  connectMs: number;
  /**
   * A statement running longer is cancelled (the connection survives): inside a transaction by the server
   * (SET LOCAL statement_timeout), outside one by the client's CancelRequest (guarded-client.ts).
   */
  statementMs: number;
  /** Server side (SET LOCAL): a transaction idle this long is terminated (rolled back). */
  idleInTransactionMs: number;
  /** Client side: no answer this long resets the connection (a partition, a hung server). */
  queryMs: number;
}

export type PreparedStatements = boolean | 'auto';

export const DEFAULT_DB_TIMEOUTS: DatabaseTimeouts = {
  connectMs: 2_000,
  statementMs: 5_000,
  idleInTransactionMs: 10_000,
  queryMs: 6_000,
};

// Each engine's driver is loaded only when it is chosen: a PostgreSQL process never maps PGlite's WASM and
// data files, and an embedded one never loads pg (docs/adr/0010-lazy-start-up.md).
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const timeouts = { ...DEFAULT_DB_TIMEOUTS, ...options.timeouts };
  if (!options.databaseUrl) {
    await options.replicas?.positions.close();
    return openPglite(options.dataDir, options.pglite);
  }
  return openPostgres(
    options.databaseUrl,
    options.poolSize ?? 10,
    timeouts,
    options.preparedStatements ?? 'auto',
    options.replicas,
  );
}

async function openPostgres(
  url: string,
  max: number,
  timeouts: DatabaseTimeouts,
  prepared: PreparedStatements,
  replicaOptions?: ReplicaOptions,
): Promise<Database> {
  const [{ default: pg }, { PrismaPg }, { guardedClientClass }] = await Promise.all([
    import('pg'),
    import('@prisma/adapter-pg'),
    import('./guarded-client.ts'),
  ]);
  const newPool = (connectionString: string, size: number, connectMs: number) => {
    // No startup parameters (a transaction pooler refuses them, and its server connections are shared): the
    // server-side timeouts are set per transaction and the rest is kept by the client (guarded-client.ts).
    const p = new pg.Pool({
      connectionString,
      max: size,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: connectMs,
      // Dead peers behind a silent network are noticed by the kernel too, not only by the query deadline.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      Client: guardedClientClass(timeouts, prepared),
    });
    // An idle client losing its connection must not crash the process; the pool replaces it. Nor may a
    // checked-out one that is reset between queries (the request deadline, guarded-client.ts): pg emits that on
    // the client, and its next query fails with the reason anyway.
    p.on('error', () => {});
    p.on('connect', (client) => client.on('error', () => {}));
    return p;
  };
  const pool = newPool(url, max, timeouts.connectMs);
  const replicas = replicaOptions?.urls.length
    ? (await import('./replicas.ts')).createReplicaSet({
        ...replicaOptions,
        primary: pool,
        primaryChecker: newPool(url, 1, 400),
        // A replica that does not answer quickly is not waited for: the primary answers instead.
        makePool: (replicaUrl, kind) =>
          kind === 'reads'
            ? newPool(replicaUrl, max, Math.min(timeouts.connectMs, 1_000))
            : newPool(replicaUrl, 1, 400),
        runOn: queryInCallersContext,
      })
    : null;
  if (!replicas) await replicaOptions?.positions.close();
  // Prisma and the raw runner see the pool through ambientPool: inside an ambient transaction their work
  // goes to its connection, and a read scope's to a replica.
  const routed = ambientPool(pool, replicas);
  // Named or not, as each connection decides (guarded-client.ts).
  const statement = (text: string, values: unknown[], prepare?: string) =>
    prepare ? { name: prepare, text, values } : { text, values };
  const prisma = new PrismaClient({ adapter: new PrismaPg(routed) });
  const runner = (client: pg.Pool | pg.PoolClient | pg.Client): SqlRunner => ({
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string, params: unknown[] = [], prepare?: string) =>
      (await client.query(statement(sql, params, prepare))).rows as T[],
    withExclusiveLock: async (lockId, fn, options) => {
      // Two connections of their own, outside the pool (whose size may be 1): one holds the lock, one migrates.
      // The lock is a transaction-scoped advisory lock in a transaction kept open for fn's duration: a session
      // lock would not survive a transaction pooler handing the next statement to another server session.
      const lockConn = await dedicatedClient(url, timeouts);
      let work: pg.Client | undefined;
      try {
        await lockConn.query('BEGIN');
        await lockConn.query('SET LOCAL idle_in_transaction_session_timeout = 0');
        await lockConn.query('SET LOCAL statement_timeout = 0');
        await waitForXactLock(lockConn, lockId, options ?? {});
        work = await dedicatedClient(url, timeouts);
        const pinned = await isDirectSession(work);
        // Only on a session of its own (closed afterwards) may a session setting change: never behind a pooler.
        if (pinned) await work.query('SET statement_timeout = 0');
        return await fn({ ...runner(work), pinned });
      } finally {
        await lockConn.query('ROLLBACK').catch(() => {});
        await lockConn.end().catch(() => {});
        await work?.end().catch(() => {});
      }
    },
  });
  return {
    kind: 'postgresql',
    prisma,
    sql: runner(routed),
    // A pool connection is a guarded client: every statement, COMMIT included, keeps its deadline and the
    // request deadline; a connection that failed mid-transaction is discarded rather than reused.
    rawTransaction: async (fn) => {
      const nested = await routed.nestedTransaction(fn);
      if (nested) return nested.result;
      const conn = await pool.connect();
      // Only an error thrown by fn leaves a connection known to be clean (after its ROLLBACK); a failed
      // BEGIN, COMMIT or ROLLBACK may leave it mid-transaction or reset, so it is not returned to the pool.
      let clean = false;
      try {
        await conn.query('BEGIN');
        let result;
        try {
          result = await fn({
            query: async <T>(text: string, params: unknown[] = [], prepare?: string) =>
              (await conn.query(statement(text, params, prepare))).rows as T[],
          });
        } catch (err) {
          await conn.query('ROLLBACK');
          clean = true;
          throw err;
        }
        await conn.query('COMMIT');
        clean = true;
        return result;
      } finally {
        conn.release(!clean);
      }
    },
    ambient: (fn) => runAmbient(pgAmbientEngine(pool), fn),
    replicas,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    close: async () => {
      await replicas?.close();
      await prisma.$disconnect();
      await pool.end().catch(() => {});
    },
  };
}

async function openPglite(dataDir: string, start?: DatabaseOptions['pglite']): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  let lock: DataDirLock | undefined;
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    lock = acquireDataDirLock(dataDir);
  }
  try {
    const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('pglite-prisma-adapter'),
    ]);
    const client = inMemory ? new PGlite({ ...start }) : new PGlite(path.resolve(dataDir, 'pg'));
    await client.waitReady;
    // Everything but the ambient transaction itself sees the client through ambientPglite: inside an ambient
    // transaction its work goes there (PGlite's own queries would wait for that transaction: a deadlock).
    const routed = ambientPglite(client);
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(routed) });
    const sql: SqlRunner = {
      exec: async (text) => {
        await routed.exec(text);
      },
      query: async <T>(text: string, params: unknown[] = []) => (await routed.query<T>(text, params)).rows,
      // PGlite lives in this process alone (the data-dir lock guarantees it), so there is no one to race.
      withExclusiveLock: async (_lockId, fn) => fn(sql),
      pinned: true,
    };
    return {
      kind: 'pglite',
      prisma,
      sql,
      // PGlite's own transaction queues behind any other (Prisma's included) on its single connection.
      rawTransaction: (fn) =>
        routed.transaction((tx) =>
          fn({ query: async <T>(text: string, params: unknown[] = []) => (await tx.query<T>(text, params)).rows }),
        ),
      ambient: (fn) => runAmbient(pgliteAmbientEngine(client), fn),
      replicas: null,
      poolStats: () => null,
      close: async () => {
        await prisma.$disconnect();
        await client.close().catch(() => {});
        lock?.release();
      },
    };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/**
 * A connection outside the pool for the migration lock and the migrations: no client-side query deadline and no
 * server-side timeouts at start-up (waiting for another instance's migrations and building an index take long).
 */
async function dedicatedClient(url: string, timeouts: DatabaseTimeouts): Promise<pg.Client> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeouts.connectMs, keepAlive: true });
  client.on('error', () => {}); // a lost connection fails its next query, which is the one reported
  await client.connect();
  return client;
}

export class DatabaseStartupError extends Error {}

/**
 * Start-up against a database that is not there yet (a container still booting, a network blip):
 * retry with backoff and a log line per attempt, bounded by `timeoutMs` in total, then give up with
 * one clear reason instead of hanging silently or dying with a stack trace.
 */
export async function waitForDatabase(
  db: Database,
  options: {
    timeoutMs: number;
    onRetry?: (info: { attempt: number; reason: string; retryInMs: number }) => void;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.sql.query('SELECT 1');
      return;
    } catch (err) {
      const reason = describeConnectError(err);
      const retryInMs = Math.min(5_000, 500 * 2 ** (attempt - 1), deadline - Date.now());
      if (retryInMs <= 0) {
        throw new DatabaseStartupError(
          `database not reachable after ${attempt} attempts in ${Math.round(options.timeoutMs / 1000)} s: ${reason}`,
        );
      }
      options.onRetry?.({ attempt, reason, retryInMs });
      await sleep(retryInMs);
    }
  }
}

function describeConnectError(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: { message?: string }[]; cause?: unknown };
  if (e?.code && Array.isArray(e.errors) && e.errors[0]?.message) return e.errors[0].message;
  const message = e?.message || String(err);
  return message.split('\n')[0];
}
