// Migrations that never block writes: statement-by-statement migrations (CREATE INDEX CONCURRENTLY), the cleanup
// of an interrupted build, lock_timeout with retries, the bounded migration-lock wait, historical checksums.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HISTORICAL_CHECKSUMS,
  migrate,
  MigrationError,
  readMigrations,
  type Migration,
} from '../../src/db/migrator.ts';
import { isNoTransaction } from '../../src/db/migration-sql.ts';
import {
  createTestDatabase,
  createUnmigratedDatabase,
  onPostgres,
  type TestDatabase,
} from '../helpers/db/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.exec(
    `CREATE TABLE online_t (id int, v text); INSERT INTO online_t SELECT g, 'x' FROM generate_series(1, 100) g`,
  );
});
afterAll(() => db.close());

let seq = 0;
function mig(sql: string, name = `2099010100${String(++seq).padStart(4, '0')}_online`): Migration {
  return { name, sql, checksum: String(seq).padStart(64, '0'), noTransaction: isNoTransaction(sql) };
}
const fast = { lockTimeoutMs: 200, backoffMs: 20 };

function collector() {
  const lines: { level: string; msg: string }[] = [];
  return {
    lines,
    log: {
      info: (_o: object, msg: string) => void lines.push({ level: 'info', msg }),
      warn: (_o: object, msg: string) => void lines.push({ level: 'warn', msg }),
    },
  };
}

async function indexState(name: string) {
  return db.sql.query<{ valid: boolean }>(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1`,
    [name],
  );
}

async function otherSession() {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return client;
}

describe('migrations outside a transaction (-- migrate:no-transaction)', () => {
  it('runs CREATE INDEX CONCURRENTLY statement by statement and records the migration once', async () => {
    const m = mig(`-- migrate:no-transaction
-- A comment; with a semicolon.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "online_t_id_idx" ON online_t (id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS online_t_v_idx ON online_t (v);`);
    expect(await migrate(db.sql, [...readMigrations(), m])).toEqual([m.name]);
    expect(await indexState('online_t_id_idx')).toEqual([{ valid: true }]);
    expect(await indexState('online_t_v_idx')).toEqual([{ valid: true }]);
    expect(await migrate(db.sql, [...readMigrations(), m])).toEqual([]);
  });

  it('an interrupted run is not recorded and the next run completes it (idempotent statements)', async () => {
    const broken = mig(`-- migrate:no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS online_t_a_idx ON online_t (id, v);
ALTER TABLE online_nope ADD COLUMN IF NOT EXISTS x int;`);
    await expect(migrate(db.sql, [...readMigrations(), broken])).rejects.toThrow(/online_nope/);
    expect(await indexState('online_t_a_idx')).toEqual([{ valid: true }]);
    const recorded = await db.sql.query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`, [broken.name]);
    expect(recorded).toEqual([]);
    await db.sql.exec('CREATE TABLE online_nope (id int)');
    expect(await migrate(db.sql, [...readMigrations(), broken])).toEqual([broken.name]);
  });

  it('drops an INVALID index left by an interrupted build before building it again', async () => {
    await db.sql.exec(`INSERT INTO online_t VALUES (1, 'dup')`);
    // A unique build over duplicates fails half-way, like a build cut off by a crash: an INVALID index remains.
    await expect(db.sql.exec('CREATE UNIQUE INDEX CONCURRENTLY online_t_uniq ON online_t (id)')).rejects.toThrow();
    expect(await indexState('online_t_uniq')).toEqual([{ valid: false }]);
    await db.sql.exec(`DELETE FROM online_t WHERE v = 'dup'`);
    const m = mig(`-- migrate:no-transaction
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS online_t_uniq ON online_t (id);`);
    expect(await migrate(db.sql, [...readMigrations(), m])).toEqual([m.name]);
    expect(await indexState('online_t_uniq')).toEqual([{ valid: true }]);
  });

  it('behind a transaction pooler (no pinned session) sets no session setting: only SET LOCAL in transactions', async () => {
    const sent: string[] = [];
    const pooled = {
      ...db.sql,
      withExclusiveLock: <T>(id: number, fn: (c: typeof db.sql) => Promise<T>) =>
        db.sql.withExclusiveLock(id, (conn) =>
          fn({ ...conn, pinned: false, exec: (text: string) => (sent.push(text), conn.exec(text)) }),
        ),
    };
    const m = mig(`-- migrate:no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS online_t_p_idx ON online_t (v, id);
ALTER TABLE online_t ADD COLUMN IF NOT EXISTS p int;`);
    expect(await migrate(pooled, [...readMigrations(), m])).toEqual([m.name]);
    expect(sent.filter((t) => /^\s*(SET|RESET) (?!LOCAL)/im.test(t))).toEqual([]);
    // Sent on its own, outside any transaction block.
    expect(sent.filter((t) => t.includes('online_t_p_idx'))).toEqual([
      expect.stringMatching(
        /^-- migrate:no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS online_t_p_idx ON online_t \(v, id\)$/,
      ),
    ]);
    expect(sent.some((t) => t.includes('SET LOCAL lock_timeout') && t.includes('ADD COLUMN IF NOT EXISTS p'))).toBe(
      true,
    );
  });

  it('refuses a CREATE INDEX CONCURRENTLY without IF NOT EXISTS (not re-runnable)', async () => {
    const m = mig(`-- migrate:no-transaction
CREATE INDEX CONCURRENTLY online_t_b_idx ON online_t (v, id);`);
    await expect(migrate(db.sql, [...readMigrations(), m])).rejects.toThrow(/IF NOT EXISTS/);
  });
});

describe('historical checksums', () => {
  const name = '20261124100000_idempotency_keys';

  it('a database that recorded the released text of an edited migration starts; any other edit is refused', async () => {
    const [old] = HISTORICAL_CHECKSUMS[name];
    await db.sql.query(`UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2`, [old, name]);
    try {
      expect(await migrate(db.sql)).toEqual([]);
      await db.sql.query(`UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2`, [
        'e'.repeat(64),
        name,
      ]);
      await expect(migrate(db.sql)).rejects.toThrow(/20261124100000_idempotency_keys was edited.*checksum mismatch/);
    } finally {
      const current = readMigrations().find((m) => m.name === name)!.checksum;
      await db.sql.query(`UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2`, [current, name]);
    }
  });

  it('a database migrated with the released text gets the current column type (BYTEA to base64 TEXT)', async () => {
    const oldSql = readFileSync(new URL('../fixtures/idempotency_keys.released-0844e36.sql', import.meta.url), 'utf8');
    const fresh = await createUnmigratedDatabase();
    try {
      const released = readMigrations()
        .filter((m) => m.name < '20261126')
        .map((m) => (m.name === name ? { ...m, sql: oldSql, checksum: HISTORICAL_CHECKSUMS[name][0] } : m));
      await migrate(fresh.sql, released);
      const type = () =>
        fresh.sql.query<{ t: string }>(
          `SELECT data_type AS t FROM information_schema.columns WHERE table_name = 'idempotency_keys' AND column_name = 'responseBody'`,
        );
      expect(await type()).toEqual([{ t: 'bytea' }]);
      expect(await migrate(fresh.sql)).toContain('20261126100000_idempotency_response_text');
      expect(await type()).toEqual([{ t: 'text' }]);
    } finally {
      await fresh.close();
    }
  });

  it("a database migrated with the attachments migration's edited text starts, and keeps its subject trigger", async () => {
    const attachments = '20261127120000_attachments';
    // The text 75fe11d gave the file: the released one with orgId in the trigger's delete.
    const released = readMigrations().find((m) => m.name === attachments)!;
    const edited = released.sql.replace(
      `    DELETE FROM "attachments" WHERE "subjectType" = TG_ARGV[0] AND "subjectId" = OLD."id";`,
      `    -- orgId first: the (orgId, subjectType, subjectId, …) index serves each deleted subject row.
    DELETE FROM "attachments"
    WHERE "orgId" = OLD."orgId" AND "subjectType" = TG_ARGV[0] AND "subjectId" = OLD."id";`,
    );
    const checksum = createHash('sha256').update(edited).digest('hex');
    expect(HISTORICAL_CHECKSUMS[attachments]).toContain(checksum);
    const fresh = await createUnmigratedDatabase();
    try {
      const upToIt = readMigrations()
        .filter((m) => m.name <= attachments)
        .map((m) => (m.name === attachments ? { ...m, sql: edited, checksum } : m));
      await migrate(fresh.sql, upToIt);
      const trigger = async () =>
        (
          await fresh.sql.query<{ src: string }>(
            `SELECT prosrc AS src FROM pg_proc WHERE proname = 'attachments_delete_subject'`,
          )
        )[0].src;
      expect(await trigger()).toContain('"orgId" = OLD."orgId"');
      expect(await migrate(fresh.sql)).toContain('20261127150000_attachments_subject_trigger_org');
      expect(await trigger()).toContain('"orgId" = OLD."orgId"');
    } finally {
      await fresh.close();
    }
  });
});

describe.skipIf(!onPostgres)('locks (PostgreSQL)', () => {
  it('a DDL statement gives up its lock wait after lock_timeout and is retried until the lock is free', async () => {
    const holder = await otherSession();
    try {
      await holder.query('BEGIN; LOCK TABLE online_t IN ACCESS SHARE MODE');
      const { lines, log } = collector();
      const m = mig('ALTER TABLE online_t ADD COLUMN IF NOT EXISTS w int;');
      const run = migrate(db.sql, [...readMigrations(), m], { ...fast, log });
      while (!lines.some((l) => l.level === 'warn')) await new Promise((r) => setTimeout(r, 20));
      // Meanwhile a writer is not queued behind the waiting ALTER: it gave up its place.
      await db.sql.exec(`INSERT INTO online_t VALUES (1000, 'w')`);
      await holder.query('COMMIT');
      expect(await run).toEqual([m.name]);
      expect(lines.find((l) => l.level === 'warn')?.msg).toMatch(/lock timeout.*retrying in/);
    } finally {
      await holder.end();
    }
  });

  it('fails with a clear message after the bounded number of tries', async () => {
    const holder = await otherSession();
    try {
      await holder.query('BEGIN; LOCK TABLE online_t IN SHARE UPDATE EXCLUSIVE MODE');
      const m = mig(`-- migrate:no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS online_t_c_idx ON online_t (v);`);
      await expect(migrate(db.sql, [...readMigrations(), m], { ...fast, attempts: 3 })).rejects.toThrow(
        /online failed: its locks were not granted within 200 ms in 3 tries.*long transaction/,
      );
    } finally {
      await holder.end();
    }
  });

  it('waits for the migration lock with a log line naming its holder, for a bounded time', async () => {
    const holder = await otherSession();
    try {
      // The previous release holds it as a session lock: the same key, so the two exclude each other.
      await holder.query(`SET application_name = 'old-release'; SELECT pg_advisory_lock(72707341)`);
      const { lines, log } = collector();
      await expect(migrate(db.sql, readMigrations(), { lockWaitMs: 1_200, log })).rejects.toThrow(
        /migration lock: lock 72707341 not acquired in 1 s; held by server process \d+ \(application "old-release"/,
      );
      expect(lines[0]).toMatchObject({ level: 'warn' });
      expect(lines[0].msg).toMatch(/waiting for the migration lock \(held by server process \d+ .*old-release/);
      const waiting = migrate(db.sql, readMigrations(), { lockWaitMs: 30_000, log });
      await holder.query('SELECT pg_advisory_unlock(72707341)');
      expect(await waiting).toEqual([]);
      await expect(migrate(db.sql, readMigrations(), { lockWaitMs: 1 })).resolves.toEqual([]);
    } finally {
      await holder.end();
    }
  });
});

it('on a direct connection the migration session is pinned (session settings hold); PGlite too', async () => {
  let pinned: boolean | undefined;
  await db.sql.withExclusiveLock(1, async (conn) => {
    pinned = conn.pinned;
  });
  expect(pinned).toBe(true);
  expect(MigrationError).toBeDefined();
});
