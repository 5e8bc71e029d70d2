import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.ts';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.ts';

/** Raw SQL access below Prisma, for the migrator and health checks. */
export interface SqlRunner {
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn while holding an exclusive cross-process lock (a PostgreSQL advisory lock). */
  withExclusiveLock<T>(lockId: number, fn: (sql: SqlRunner) => Promise<T>): Promise<T>;
}

export interface Database {
  kind: 'postgresql' | 'pglite';
  prisma: PrismaClient;
  sql: SqlRunner;
  /** Connections in use and configured maximum (PostgreSQL only). */
  poolStats(): { total: number; idle: number; waiting: number; max: number } | null;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Directory for the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  poolSize?: number;
  /** A PGlite data directory dump to start from instead of an empty cluster (tests start migrated, once per run). */
  pgliteTemplate?: Blob;
}

// Each engine's driver is loaded only when it is chosen: a PostgreSQL process never maps PGlite's WASM and
// data files, and an embedded one never loads pg (see "Memory and start-up" in the README).
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10)
    : openPglite(options.dataDir, options.pgliteTemplate);
}

async function openPostgres(url: string, max: number): Promise<Database> {
  const [{ default: pg }, { PrismaPg }] = await Promise.all([import('pg'), import('@prisma/adapter-pg')]);
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const runner = (client: pg.Pool | pg.PoolClient): SqlRunner => ({
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T,>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
    withExclusiveLock: async (lockId, fn) => {
      const conn = await pool.connect();
      try {
        await conn.query('SELECT pg_advisory_lock($1)', [lockId]);
        try {
          return await fn(runner(conn));
        } finally {
          await conn.query('SELECT pg_advisory_unlock($1)', [lockId]);
        }
      } finally {
        conn.release();
      }
    },
  });
  return {
    kind: 'postgresql',
    prisma,
    sql: runner(pool),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    close: async () => {
      await prisma.$disconnect();
      await pool.end().catch(() => {});
    },
  };
}

async function openPglite(dataDir: string, template?: Blob): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  let lock: DataDirLock | undefined;
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    lock = acquireDataDirLock(dataDir);
  }
  try {
    const [{ PGlite }, { PrismaPGlite }] = await Promise.all([import('@electric-sql/pglite'), import('pglite-prisma-adapter')]);
    const client = inMemory ? new PGlite({ loadDataDir: template }) : new PGlite(path.resolve(dataDir, 'pg'));
    await client.waitReady;
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) });
    const sql: SqlRunner = {
      exec: async (text) => {
        await client.exec(text);
      },
      query: async <T,>(text: string, params: unknown[] = []) => (await client.query<T>(text, params)).rows,
      // PGlite lives in this process alone (the data-dir lock guarantees it), so there is no one to race.
      withExclusiveLock: async (_lockId, fn) => fn(sql),
    };
    return {
      kind: 'pglite',
      prisma,
      sql,
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
