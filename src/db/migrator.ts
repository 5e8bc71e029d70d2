import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LockWaitTimeoutError, type SqlRunner } from './database.ts';
import { concurrentIndexName, isNoTransaction, needsOwnTransaction, splitStatements } from './migration-sql.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));
// Arbitrary constant shared by every process of this service: serialises concurrent start-ups.
const MIGRATION_LOCK_ID = 72_707_341;

/**
 * Checksums a released migration had before it was edited (which must never happen again: CI compares every
 * released migration with the previous release, see .ci/check-released-migrations.sh). A database that applied
 * one of these texts is accepted; a later migration brings its schema to the current text where they differ.
 */
export const HISTORICAL_CHECKSUMS: Readonly<Record<string, readonly string[]>> = {
  // 0844e36 created "responseBody" as BYTEA; 821a659 changed the file to TEXT (base64). Repaired by
  // 20261126100000_idempotency_response_text.
  '20261124100000_idempotency_keys': ['5b691d59bacd353fac0b067a9ca35c1722171643c9607e11585a5da99ff1984a'],
  // 75fe11d edited this file (orgId in the subject trigger's delete) after da30af5 released it; the file is back as
  // released, and 20261127150000_attachments_subject_trigger_org gives every database the edited function.
  '20261127120000_attachments': ['20a9dd86b1c3dfe52988958c2924dbd46cfdc1c0653783c4c6339e778ec1d08f'],
};

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
  /** Its file starts with `-- migrate:no-transaction`: statements run one by one, each committed on its own. */
  noTransaction?: boolean;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      // Prisma Migrate stores the SHA-256 of the file, so `prisma migrate status` agrees with this table.
      const checksum = createHash('sha256').update(sql).digest('hex');
      return { name, sql, checksum, noTransaction: isNoTransaction(sql) };
    });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {}

export interface MigrationLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** The one line a start logs about the schema: how many migrations it applied and how long that took. */
export function migrationSummary(applied: number, durationMs: number): string {
  if (applied === 0) return `database schema up to date (checked in ${duration(durationMs)})`;
  return `applied ${applied} migration${applied === 1 ? '' : 's'} in ${duration(durationMs)}`;
}

export interface MigrateOptions {
  /** Every DDL statement's `lock_timeout`: it gives up rather than queue (and make every writer queue behind it). */
  lockTimeoutMs?: number;
  /** Tries of a statement (or transactional migration) that ran into lock_timeout, with backoff between. */
  attempts?: number;
  /** First backoff; doubles per try, at most 10 s (10 tries: about a minute of waiting in all). */
  backoffMs?: number;
  /** Longest wait for the migration lock another process holds (it may be migrating a large table). */
  lockWaitMs?: number;
  log?: MigrationLog;
  sleep?: (ms: number) => Promise<void>;
}

const DEFAULTS = { lockTimeoutMs: 2_000, attempts: 10, backoffMs: 250, lockWaitMs: 300_000 };
// lock_not_available (lock_timeout) and deadlock_detected: both leave nothing done and are worth another try.
const RETRYABLE = new Set(['55P03', '40P01']);

/**
 * Applies pending migrations in name order under a cross-process lock, so several processes starting at once
 * apply each migration exactly once. A migration runs in one transaction, or statement by statement when its
 * file starts with `-- migrate:no-transaction`; either way every statement waits at most lockTimeoutMs for its
 * locks and is tried again with backoff. Logs one summary line (each migration at debug); returns the names applied.
 */
export async function migrate(
  sql: SqlRunner,
  migrations = readMigrations(),
  options: MigrateOptions = {},
): Promise<string[]> {
  const o = { ...DEFAULTS, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)), ...options };
  const onWait = ({ waitedMs, holder }: { waitedMs: number; holder: string | null }) =>
    o.log?.warn(
      { waitedMs, holder },
      `waiting for the migration lock (held by ${holder ?? 'another process'}); giving up after ${Math.round(o.lockWaitMs / 1000)} s`,
    );
  const started = Date.now();
  try {
    const applied = await sql.withExclusiveLock(MIGRATION_LOCK_ID, (conn) => applyPending(conn, migrations, o), {
      waitMs: o.lockWaitMs,
      onWait,
    });
    const durationMs = Date.now() - started;
    o.log?.info({ applied: applied.length, durationMs }, migrationSummary(applied.length, durationMs));
    return applied;
  } catch (err) {
    if (err instanceof LockWaitTimeoutError) throw new MigrationError(`migration lock: ${err.message}`);
    throw err;
  }
}

type Options = typeof DEFAULTS & MigrateOptions & { sleep: (ms: number) => Promise<void> };

async function applyPending(conn: SqlRunner, migrations: Migration[], o: Options): Promise<string[]> {
  await conn.exec(CREATE_TABLE);
  const rows = await conn.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
  );
  const applied = new Map(rows.map((r) => [r.migration_name, r]));
  const done: string[] = [];
  for (const m of migrations) {
    const prior = applied.get(m.name);
    if (prior) {
      if (!prior.finished_at) throw new MigrationError(`Migration ${m.name} previously failed; resolve it manually`);
      if (prior.checksum !== m.checksum && !HISTORICAL_CHECKSUMS[m.name]?.includes(prior.checksum)) {
        throw new MigrationError(`Migration ${m.name} was edited after it was applied (checksum mismatch)`);
      }
      continue;
    }
    const record = `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
      VALUES ('${randomUUID()}', '${m.checksum}', '${m.name.replace(/'/g, "''")}', now(), 1)`;
    if (m.noTransaction) await applyStatementwise(conn, m, record, o);
    else {
      await withRetry(m.name, o, async () => {
        try {
          await conn.exec(`BEGIN;\n${setLocal(o)}\n${m.sql}\n;${record};\nCOMMIT;`);
        } catch (err) {
          await conn.exec('ROLLBACK').catch(() => {});
          throw err;
        }
      });
    }
    o.log?.debug?.({ migration: m.name }, `migration ${m.name} applied`);
    done.push(m.name);
  }
  return done;
}

function setLocal(o: Options) {
  return `SET LOCAL lock_timeout = ${Math.round(o.lockTimeoutMs)}; SET LOCAL statement_timeout = 0;`;
}

/**
 * A no-transaction migration: each statement commits on its own, so an interrupted run leaves some done. Its
 * statements must be idempotent (IF NOT EXISTS) for the next start-up to run them all again; it is recorded only
 * when every one succeeded. A CONCURRENTLY build interrupted (or timed out) leaves an INVALID index under the
 * name, which IF NOT EXISTS would take for done: it is dropped before each build.
 */
async function applyStatementwise(conn: SqlRunner, m: Migration, record: string, o: Options): Promise<void> {
  for (const statement of splitStatements(m.sql)) {
    const index = concurrentIndexName(statement);
    if (index && !index.idempotent) {
      throw new MigrationError(`Migration ${m.name}: CREATE INDEX CONCURRENTLY needs IF NOT EXISTS (re-runnable)`);
    }
    await withRetry(m.name, o, async () => {
      if (index) await dropInvalidIndex(conn, index.name);
      if (!needsOwnTransaction(statement)) {
        try {
          await conn.exec(`BEGIN;\n${setLocal(o)}\n${statement};\nCOMMIT;`);
        } catch (err) {
          await conn.exec('ROLLBACK').catch(() => {});
          throw err;
        }
        return;
      }
      // Outside a transaction SET LOCAL is void: a direct session takes a session setting (the connection is
      // discarded afterwards). Behind a transaction pooler a session setting would land on some other client's
      // server session, so the statement runs with the server's defaults: CONCURRENTLY takes no lock that
      // writers or readers wait for, so there is nothing for them to queue behind.
      if (conn.pinned) await conn.exec(`SET lock_timeout = ${Math.round(o.lockTimeoutMs)}`);
      try {
        await conn.exec(statement);
      } finally {
        if (conn.pinned) await conn.exec('RESET lock_timeout').catch(() => {});
      }
    });
  }
  await conn.exec(record);
}

async function dropInvalidIndex(conn: SqlRunner, name: string): Promise<void> {
  const [invalid] = await conn.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
    [name],
  );
  if (invalid) await conn.exec(`DROP INDEX CONCURRENTLY IF EXISTS "${name.replace(/"/g, '""')}"`);
}

async function withRetry(name: string, o: Options, fn: () => Promise<void>): Promise<void> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      const message = (err as Error).message;
      if (!code || !RETRYABLE.has(code)) throw new MigrationError(`Migration ${name} failed: ${message}`);
      if (attempt >= o.attempts) {
        throw new MigrationError(
          `Migration ${name} failed: its locks were not granted within ${o.lockTimeoutMs} ms in ${attempt} tries ` +
            `over ${Math.round((Date.now() - started) / 1000)} s (${message}); a long transaction holds them: ` +
            'end it (pg_stat_activity) and start again',
        );
      }
      const retryInMs = Math.min(10_000, o.backoffMs * 2 ** (attempt - 1));
      o.log?.warn(
        { migration: name, attempt, retryInMs },
        `migration ${name}: ${message}; retrying in ${retryInMs} ms`,
      );
      await o.sleep(retryInMs);
    }
  }
}
