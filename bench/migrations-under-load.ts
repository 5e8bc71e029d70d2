// A release's migrations applied by the service's own migrator to a large database under a write load.
// The database is migrated to just before 20261123110000_scale_indexes and seeded with BENCH_ROWS meter logs
// (2 M, generate_series). A writer inserts a meter log every 10 ms on a pool like the API's (10 connections,
// 2 s to get one, 5 s statement timeout). Each round applies scale_indexes twice, from the same starting point:
// as released (one transaction, plain CREATE INDEX / DROP INDEX: writes wait for the whole build) and new-style
// (`-- migrate:no-transaction`, CREATE INDEX CONCURRENTLY IF NOT EXISTS, DROP INDEX CONCURRENTLY IF EXISTS).
// Reported per variant: migration time, the writers' longest wait and their errors; rounds alternate the variants.
// Usage: npm run bench:migrations   Env: BENCH_DATABASE_URL (admin URL, default
// postgresql://postgres@127.0.0.1:5432/postgres), BENCH_ROWS (2000000), BENCH_ROUNDS (2).
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate, readMigrations, type Migration } from '../src/db/migrator.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, num } from './lib/env.ts';
import { writeResults } from './lib/results.ts';

const ROWS = num('BENCH_ROWS', 2_000_000);
const ROUNDS = num('BENCH_ROUNDS', 2);
const TARGET = '20261123110000_scale_indexes';

const all = readMigrations();
const released = all.find((m) => m.name === TARGET)!;
const concurrent: Migration = {
  ...released,
  noTransaction: true,
  sql:
    '-- migrate:no-transaction\n' +
    released.sql
      .replace(/CREATE INDEX "/g, 'CREATE INDEX CONCURRENTLY IF NOT EXISTS "')
      .replace(/DROP INDEX "/g, 'DROP INDEX CONCURRENTLY IF EXISTS "'),
};
const created = [...released.sql.matchAll(/CREATE INDEX "(\w+)"/g)].map((m) => m[1]);
const dropped = [...released.sql.matchAll(/DROP INDEX "(\w+)"/g)].map((m) => m[1]);

const scratch = await createScratchDatabase(ADMIN_URL, 'bench_mig');
const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 4 });
// Seeding and resetting take longer than the pool's query deadline: a plain client without one.
const raw = new pg.Client({ connectionString: scratch.url });
await raw.connect();
try {
  await migrate(
    db.sql,
    all.filter((m) => m.name < TARGET),
  );
  let t = Date.now();
  // Bulk loading into a table without its secondary indexes and building them afterwards is several times faster.
  const seedIndexes = (
    await raw.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'meter_logs'::regclass AND NOT i.indisprimary`,
    )
  ).rows;
  await raw.query(`
    SET statement_timeout = 0;
    SET maintenance_work_mem = '256MB';
    ${seedIndexes.map((x) => `DROP INDEX "${x.name}";`).join(' ')}
    INSERT INTO organizations (id, name, slug) VALUES ('org1', 'Bench', 'bench');
    INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "updatedAt")
      SELECT 'a' || g, 'org1', 'Machine ' || g, 'off-road', 'HOURS', 'h', now() FROM generate_series(1, 200) g;
    INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt")
      SELECT 'm' || lpad(g::text, 8, '0'), 'org1', 'a' || (g % 200 + 1), g / 200.0, 0.5, now() - (g || ' seconds')::interval
      FROM generate_series(1, ${ROWS}) g;
    ${seedIndexes.map((x) => `${x.def};`).join(' ')}
    ANALYZE meter_logs;`);
  console.log(`seeded ${ROWS.toLocaleString('en')} meter logs in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  // The indexes the released migration drops, to put back between variants.
  const definitions = (
    await raw.query<{ def: string }>(`SELECT pg_get_indexdef(c.oid) AS def FROM pg_class c WHERE c.relname = ANY($1)`, [
      dropped,
    ])
  ).rows;

  const results: Record<string, { ms: number; worstMs: number; errors: number; writes: number }[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, m] of round % 2
      ? [['concurrent', concurrent] as const, ['released', released] as const]
      : [['released', released] as const, ['concurrent', concurrent] as const]) {
      const r = await underLoad(() => migrate(db.sql, [...all.filter((x) => x.name < TARGET), m]));
      (results[label] ??= []).push(r);
      console.log(`round ${round + 1} ${label}: ${JSON.stringify(r)}`);
      // Back to the starting point: the new indexes gone, the dropped ones back, the migration unrecorded.
      t = Date.now();
      await raw.query(
        `SET statement_timeout = 0; ${created.map((n) => `DROP INDEX IF EXISTS "${n}";`).join(' ')}
         ${definitions.map((d) => `${d.def};`).join(' ')} DELETE FROM "_prisma_migrations" WHERE migration_name = '${TARGET}';`,
      );
    }
  }
  console.log("\nvariant      migration   writers' longest wait   writer errors (of writes)");
  for (const [label, rs] of Object.entries(results)) {
    const fmt = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(' / ');
    console.log(
      `${label.padEnd(12)} ${fmt(rs.map((r) => r.ms))} s   ${fmt(rs.map((r) => r.worstMs))} s   ${rs.map((r) => `${r.errors} (${r.writes})`).join(' / ')}`,
    );
  }
  writeResults('migrations-under-load', { rows: ROWS, rounds: ROUNDS, migration: TARGET, variants: results });
} finally {
  await raw.end();
  await db.close();
  await scratch.drop();
}

/** Runs fn while a writer inserts a meter log every 10 ms (API's 5 s statement timeout); its worst wait and errors. */
async function underLoad(fn: () => Promise<unknown>) {
  // The API's pool: 10 connections, 2 s to get one (then 503), 5 s statement timeout.
  const pool = new pg.Pool({
    connectionString: scratch.url,
    max: 10,
    connectionTimeoutMillis: 2_000,
    statement_timeout: 5_000,
  });
  pool.on('error', () => {});
  let worstMs = 0;
  let errors = 0;
  let writes = 0;
  let seq = 0;
  const inflight = new Set<Promise<void>>();
  let running = true;
  const writer = (async () => {
    while (running) {
      const started = Date.now();
      const p = pool
        .query(
          `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt") VALUES ($1, 'org1', 'a1', 1, 0.1, now())`,
          [`w${Date.now()}_${seq++}`],
        )
        .then(
          () => void 0,
          () => void errors++,
        )
        .finally(() => {
          writes++;
          worstMs = Math.max(worstMs, Date.now() - started);
          inflight.delete(p);
        });
      inflight.add(p);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  const t = Date.now();
  await fn();
  const ms = Date.now() - t;
  await new Promise((r) => setTimeout(r, 500));
  running = false;
  await writer;
  await Promise.all(inflight);
  await pool.end();
  return { ms, worstMs, errors, writes };
}
