// Monthly partitions at volume, on PostgreSQL. Two parts (BENCH_ONLY picks one):
// - `conversion`: an installation of the previous schema holding BENCH_ROWS meter logs, events and deliveries each
//   (generate_series), migrated, then converted online (`admin partitions convert`'s code) while a writer does what
//   the previous release does every 10 ms (an event with its delivery, a keyed reading) and the previous release's
//   server (.ci/previous-release) answers its N-1 smoke over and over on the same database: each table's conversion
//   time, per million rows, the writer's longest wait and its errors, the longest lock wait of any session but the
//   conversion's, the smoke's passes, failures and slowest call; then retention's drop of the history partitions.
// - `scale`: POST /hours (sequential, one reading per call on 200 assets) and the reads of one asset (its first page
//   of readings, GET /hours/{id} of the oldest) on two databases holding the first and last of BENCH_SIZES readings
//   (24 months, 2,000 assets), each served by its own API process (tsx from src/), rounds alternating: p50 per
//   round, medians of BENCH_ROUNDS rounds and the median of the per-round ratios (large / small).
// Usage: npm run bench:partitions   Env: BENCH_DATABASE_URL, BENCH_ROWS (1000000), BENCH_SIZES
// (1000000,20000000), BENCH_SAMPLES (200), BENCH_ROUNDS (3), BENCH_PORT (4340; the N-1 server on BENCH_PORT + 2),
// BENCH_ONLY (conversion|scale), BENCH_DB (bench_part: the scratch databases' prefix), BENCH_N1=0 (no N-1 smoke),
// BENCH_KEEP=1 (keep the converted database, history partitions and all, for the test suites:
// TEST_DATABASE_TEMPLATE=<its name>; its name is in the results).
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate, readMigrations } from '../src/db/migrator.ts';
import { convertToPartitions } from '../src/db/partition-conversion.ts';
import { dropPartition } from '../src/db/partitions.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { dropSecondaryIndexes } from './lib/bulk.ts';
import { startLockWatch, startPreviousRelease, startWriter } from './lib/conversion-load.ts';
import { ADMIN_URL, log, num, text } from './lib/env.ts';
import { apiClient, sequential } from './lib/http-client.ts';
import { writeResults } from './lib/results.ts';
import { createBenchTenant } from './lib/seed.ts';
import { API_ENTRY, startApi, stop } from './lib/server.ts';
import { median, round, roundRatios } from './lib/stats.ts';

const ROWS = num('BENCH_ROWS', 1_000_000);
const SIZES = text('BENCH_SIZES', '1000000,20000000').split(',').map(Number);
const SAMPLES = num('BENCH_SAMPLES', 200);
const ROUNDS = num('BENCH_ROUNDS', 3);
const PORT = num('BENCH_PORT', 4340);
const ONLY = process.env.BENCH_ONLY;
const DB_PREFIX = text('BENCH_DB', 'bench_part');
const N1 = process.env.BENCH_N1 !== '0';
const KEEP = process.env.BENCH_KEEP === '1';
const PARTITIONS = '20261129150000_monthly_partitions';
const results: Record<string, unknown> = {};

async function client(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`SET statement_timeout = 0; SET maintenance_work_mem = '256MB'`);
  return c;
}

/** Rows inserted with a table's secondary indexes dropped and rebuilt after: bulk loading's usual shape. */
async function bulk(raw: pg.Client, table: string, insert: string) {
  const rebuild = await dropSecondaryIndexes(raw, table);
  // Generated rows reference rows that exist: their foreign-key checks (triggers) are skipped while loading.
  await raw.query(`SET session_replication_role = replica`);
  await raw.query(insert);
  await raw.query(`SET session_replication_role = DEFAULT`);
  await rebuild();
  await raw.query(`ANALYZE ${table}`);
}

async function conversion() {
  const scratch = await createScratchDatabase(ADMIN_URL, `${DB_PREFIX}_conv`);
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 10 });
  const raw = await client(scratch.url);
  try {
    await migrate(
      db.sql,
      readMigrations().filter((m) => m.name < PARTITIONS),
    );
    let t = Date.now();
    await raw.query(`INSERT INTO organizations (id, name, slug) VALUES ('org1', 'Bench', 'bench');
      INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "updatedAt")
        SELECT 'a' || g, 'org1', 'Machine ' || g, 'off-road', 'HOURS', 'h', now() FROM generate_series(1, 200) g;
      INSERT INTO webhook_subscriptions (id, "orgId", url, events, secret)
        VALUES ('sub1', 'org1', 'https://receiver.example/hook', '{asset.created}', 'whsec_bench')`);
    const ago = `now() - make_interval(secs => g * 2)`;
    await bulk(
      raw,
      'events',
      `INSERT INTO events (id, "orgId", type, data, "createdAt")
       SELECT 'e' || g, 'org1', 'asset.created', '{"assetId":"a1"}', ${ago} FROM generate_series(1, ${ROWS}) g`,
    );
    await bulk(
      raw,
      'webhook_deliveries',
      `INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", status, "createdAt")
       SELECT 'd' || g, 'org1', 'sub1', 'e' || g, 'asset.created', 'DELIVERED', ${ago} FROM generate_series(1, ${ROWS}) g`,
    );
    await bulk(
      raw,
      'meter_logs',
      `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt", "clientMutationId")
       SELECT 'm' || g, 'org1', 'a' || (g % 200 + 1), g / 200.0, 0.5, ${ago}, CASE WHEN g % 4 = 0 THEN 'k' || g END
       FROM generate_series(1, ${ROWS}) g`,
    );
    log(`seeded ${ROWS.toLocaleString('en')} rows in each table in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    await migrate(db.sql);
    const migrateMs = Date.now() - t;
    log(`migrations (keys of ${(ROWS / 4).toLocaleString('en')} readings carried over) in ${migrateMs} ms`);

    const previous = N1 ? await startPreviousRelease(scratch.url, PORT + 2) : null;
    const writer = startWriter(db);
    const own: number[] = [];
    const locks = startLockWatch(scratch.url, () => own);
    const steps: { table: string; step: string; at: number }[] = [];
    t = Date.now();
    await db.sql.withExclusiveLock(1, async (sql) => {
      own.push(...(await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).map((r) => r.pid));
      return convertToPartitions(sql, {
        onProgress: (p) => steps.push({ table: p.table, step: p.step, at: Date.now() }),
      });
    });
    const totalMs = Date.now() - t;
    const w = await writer.stop();
    const n1 = await previous?.stop();
    const lockWaits = await locks.stop();
    // Retention's drop of a month at this size: the legacy partitions hold every row (deliveries first: they name
    // the events).
    const dropMs: Record<string, number> = {};
    for (const table of KEEP ? [] : (['webhook_deliveries', 'events'] as const)) {
      const t0 = performance.now();
      await dropPartition(db, table, `${table}_legacy`);
      dropMs[table] = round(performance.now() - t0, 1);
    }
    const perTable: Record<string, number> = {};
    let from = t;
    for (const s of steps) {
      perTable[s.table] = (perTable[s.table] ?? 0) + (s.at - from);
      from = s.at;
    }
    results.conversion = {
      rows: ROWS,
      migrateMs,
      totalMs,
      perTableMs: perTable,
      msPerMillionRows: Object.fromEntries(Object.entries(perTable).map(([k, v]) => [k, round(v / (ROWS / 1e6), 0)])),
      writes: w.writes,
      errors: w.errors,
      worstWriteMs: w.worstMs,
      ...lockWaits,
      previousRelease: n1 ?? null,
      dropMs,
      kept: KEEP ? new URL(scratch.url).pathname.slice(1) : null,
    };
    log(JSON.stringify(results.conversion));
  } finally {
    await raw.end();
    await db.close();
    if (!KEEP) await scratch.drop();
  }
}

/**
 * One database per size, loaded alike (the readings of the largest size's spread, cut at the size), each served by
 * its own API process; rounds alternate which size goes first, so load on the shared machine falls on both.
 */
async function scale() {
  const sizes = [SIZES[0], SIZES[SIZES.length - 1]];
  const dbs: { size: number; url: string; key: string; drop(): Promise<void> }[] = [];
  const servers: Awaited<ReturnType<typeof startApi>>['server'][] = [];
  try {
    for (const size of sizes) {
      const scratch = await createScratchDatabase(ADMIN_URL, `${DB_PREFIX}_${size}`);
      dbs.push({ size, url: scratch.url, key: await loadReadings(scratch.url, size), drop: () => scratch.drop() });
    }
    const apis = [];
    for (const [i, d] of dbs.entries()) {
      const { server } = await startApi({
        port: PORT + i,
        env: { DATABASE_URL: d.url, WEBHOOK_DISPATCH_CRON: '0 0 1 1 *' },
        args: API_ENTRY.tsx,
      });
      servers.push(server);
      apis.push(apiClient(PORT + i, d.key));
    }
    const rounds = dbs.map(() => ({ post: [] as number[], assetPage: [] as number[], oldById: [] as number[] }));
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of r % 2 ? [1, 0] : [0, 1]) {
        const m = await measureRound(apis[i].call);
        for (const k of ['post', 'assetPage', 'oldById'] as const) rounds[i][k].push(m[k]);
        log(`round ${r + 1} ${dbs[i].size.toLocaleString('en')}: ${JSON.stringify(m)}`);
      }
    }
    await Promise.all(apis.map((a) => a.close()));
    const summary: Record<string, unknown> = {};
    for (const [i, d] of dbs.entries()) {
      summary[d.size] = Object.fromEntries(
        Object.entries(rounds[i]).map(([k, xs]) => [`${k}P50Ms`, round(median(xs), 2)]),
      );
    }
    summary.postRatio = roundRatios(rounds[1].post, rounds[0].post);
    summary.assetPageRatio = roundRatios(rounds[1].assetPage, rounds[0].assetPage);
    summary.oldByIdRatio = roundRatios(rounds[1].oldById, rounds[0].oldById);
    results.scale = summary;
    log(JSON.stringify(summary));
  } finally {
    for (const server of servers) await stop(server);
    for (const d of dbs) await d.drop();
  }
}

/** A migrated database with a tenant, 2,000 assets and `size` readings over 24 months; returns the tenant's key. */
async function loadReadings(url: string, size: number): Promise<string> {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused', poolSize: 2 });
  const raw = await client(url);
  try {
    await migrate(db.sql);
    const tenant = await createBenchTenant(db);
    await raw.query(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "updatedAt",
         "lastMeterReading", "lastMeterAt")
       SELECT 'a' || g, $1, 'Machine ' || g, 'off-road', 'HOURS', 'h', now(), 0, now() - interval '730 days'
       FROM generate_series(1, 2000) g`,
      [tenant.orgId],
    );
    // Two years of months, created as the service creates a backdated month.
    await raw.query(`SELECT fleet_month_partition('meter_logs', now() - make_interval(months => m))
                     FROM generate_series(0, 24) m`);
    const t = Date.now();
    // Reading g of asset (g % 2000), spread evenly over the 730 days before the benchmark's own readings; a smaller
    // size keeps every (largest / size)-th reading, so both spreads are alike.
    const step = Math.round(SIZES[SIZES.length - 1] / size);
    await bulk(
      raw,
      'meter_logs',
      `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt")
       SELECT 's' || g, '${tenant.orgId}', 'a' || (g % 2000 + 1), g / 2000.0, 0.5,
              now() - interval '1 day' - make_interval(secs => (g::float8 / ${SIZES[SIZES.length - 1]}) * 729 * 86400)
       FROM generate_series(1, ${SIZES[SIZES.length - 1]}, ${step}) g`,
    );
    await raw.query('VACUUM ANALYZE meter_logs');
    log(`loaded ${size.toLocaleString('en')} readings in ${((Date.now() - t) / 1000).toFixed(0)} s`);
    return tenant.key;
  } finally {
    await raw.end();
    await db.close();
  }
}

/** The benchmark's readings only grow: a lower one would be refused without a note. */
let reading = 1e7;

/** One round on one API: p50 of POST /hours, an asset's first page of readings, and the oldest reading by id. */
async function measureRound(call: ReturnType<typeof apiClient>['call']) {
  let i = 0;
  const post = await sequential(
    () =>
      call('/hours', {
        method: 'POST',
        body: JSON.stringify({ assetId: `a${(i++ % 200) + 1}`, hoursReading: (reading += 1) }),
      }),
    SAMPLES,
  );
  const since = new Date(Date.now() - 400 * 86_400_000);
  const page = await sequential(() => call(`/hours?assetId=a7&since=${since.toISOString()}&limit=50`), SAMPLES);
  const byId = await sequential(() => call('/hours/s1'), SAMPLES);
  return { post: round(post.p50, 2), assetPage: round(page.p50, 2), oldById: round(byId.p50, 2) };
}

if (!ONLY || ONLY === 'conversion') await conversion();
if (!ONLY || ONLY === 'scale') await scale();
const file = writeResults('partitions', results);
log(`results: ${file}`);
