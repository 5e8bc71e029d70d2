// Monthly partitions at volume, on PostgreSQL. Two parts (BENCH_ONLY picks one):
// - `conversion`: an installation of the previous schema holding BENCH_ROWS meter logs, events and deliveries each
//   (generate_series), migrated, then converted online (`admin partitions convert`'s code) while a writer does what
//   the previous release does every 10 ms (an event with its delivery, a keyed reading): each table's conversion
//   time, per million rows, the writer's longest wait and its errors.
// - `scale`: POST /hours (sequential, one reading per call on 200 assets) and the reads of one asset (a month of
//   readings, GET /hours/{id} of an old one) on the API (tsx from src/) over BENCH_SIZES readings in the
//   partitioned table, spread over 24 months and 2,000 assets; p50 per size, medians of BENCH_ROUNDS rounds.
// Usage: npm run bench:partitions   Env: BENCH_DATABASE_URL, BENCH_ROWS (1000000), BENCH_SIZES
// (1000000,20000000), BENCH_SAMPLES (200), BENCH_ROUNDS (3), BENCH_PORT (4340), BENCH_ONLY (conversion|scale).
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate, readMigrations } from '../src/db/migrator.ts';
import { convertToPartitions } from '../src/db/partition-conversion.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, log, num, text } from './lib/env.ts';
import { apiClient, sequential } from './lib/http-client.ts';
import { writeResults } from './lib/results.ts';
import { createBenchTenant } from './lib/seed.ts';
import { API_ENTRY, startApi, stop } from './lib/server.ts';
import { median, round } from './lib/stats.ts';

const ROWS = num('BENCH_ROWS', 1_000_000);
const SIZES = text('BENCH_SIZES', '1000000,20000000').split(',').map(Number);
const SAMPLES = num('BENCH_SAMPLES', 200);
const ROUNDS = num('BENCH_ROUNDS', 3);
const PORT = num('BENCH_PORT', 4340);
const ONLY = process.env.BENCH_ONLY;
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
  const idx = (
    await raw.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = $1::regclass AND NOT i.indisprimary AND NOT i.indisunique`,
      [table],
    )
  ).rows;
  for (const x of idx) await raw.query(`DROP INDEX "${x.name}"`);
  await raw.query(insert);
  // A partitioned table's index reads `ON ONLY` (the parent alone): built here on every partition.
  for (const x of idx) await raw.query(x.def.replace(' ON ONLY ', ' ON '));
  await raw.query(`ANALYZE ${table}`);
}

async function conversion() {
  const scratch = await createScratchDatabase(ADMIN_URL, 'bench_part_conv');
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

    const writer = startWriter(db);
    const steps: { table: string; step: string; at: number }[] = [];
    t = Date.now();
    await db.sql.withExclusiveLock(1, (sql) =>
      convertToPartitions(sql, { onProgress: (p) => steps.push({ table: p.table, step: p.step, at: Date.now() }) }),
    );
    const totalMs = Date.now() - t;
    const w = await writer.stop();
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
    };
    log(JSON.stringify(results.conversion));
  } finally {
    await raw.end();
    await db.close();
    await scratch.drop();
  }
}

/** The previous release's writes every 10 ms on the API's pool settings: the longest one and the failures. */
function startWriter(db: Awaited<ReturnType<typeof openDatabase>>) {
  let stopped = false;
  let n = 0;
  let errors = 0;
  let worstMs = 0;
  const done = (async () => {
    while (!stopped) {
      n++;
      const t = performance.now();
      try {
        await db.sql.exec(
          `WITH e AS (INSERT INTO events (id, "orgId", type, data) VALUES ('w-e${n}', 'org1', 'asset.created', '{}') RETURNING id, type)
           INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
           SELECT 'w-d${n}', 'org1', 'sub1', id, type FROM e;
           INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt", "clientMutationId")
           VALUES ('w-m${n}', 'org1', 'a1', ${1e7 + n}, 1, now(), 'w-k${n}')`,
        );
      } catch (err) {
        errors++;
        log(`write failed: ${(err as Error).message}`);
      }
      worstMs = Math.max(worstMs, performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { writes: n, errors, worstMs: round(worstMs, 1) };
    },
  };
}

async function scale() {
  const scratch = await createScratchDatabase(ADMIN_URL, 'bench_part_scale');
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 4 });
  const raw = await client(scratch.url);
  const measured: Record<string, Record<string, number>> = {};
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
    let loaded = 0;
    for (const size of SIZES) {
      const t = Date.now();
      // Reading g of asset (g % 2000): spread evenly over the 730 days before the benchmark's own readings.
      const insert = (from: number, to: number) =>
        `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt")
         SELECT 's' || g, '${tenant.orgId}', 'a' || (g % 2000 + 1), g / 2000.0, 0.5,
                now() - interval '1 day' - make_interval(secs => (g::float8 / ${SIZES[SIZES.length - 1]}) * 729 * 86400)
         FROM generate_series(${from + 1}, ${to}) g`;
      await bulk(raw, 'meter_logs', insert(loaded, size));
      await raw.query('VACUUM ANALYZE meter_logs');
      loaded = size;
      log(`loaded ${size.toLocaleString('en')} readings in ${((Date.now() - t) / 1000).toFixed(0)} s`);
      measured[size] = await measure(scratch.url, tenant.key, raw);
      log(`${size.toLocaleString('en')}: ${JSON.stringify(measured[size])}`);
    }
    results.scale = measured;
  } finally {
    await raw.end();
    await db.close();
    await scratch.drop();
  }
}

/** The benchmark's readings only grow: a lower one would be refused without a note. */
let reading = 1e7;

async function measure(url: string, key: string, raw: pg.Client): Promise<Record<string, number>> {
  const { server } = await startApi({
    port: PORT,
    env: { DATABASE_URL: url, WEBHOOK_DISPATCH_CRON: '0 0 1 1 *' },
    args: API_ENTRY.tsx,
  });
  const api = apiClient(PORT, key);
  const rounds: Record<string, number[]> = { post: [], assetPage: [], oldById: [] };
  try {
    const [old] = (await raw.query<{ id: string }>(`SELECT id FROM meter_logs WHERE id = 's1'`)).rows;
    for (let r = 0; r < ROUNDS; r++) {
      let i = 0;
      const post = await sequential(
        () =>
          api.call('/hours', {
            method: 'POST',
            body: JSON.stringify({ assetId: `a${(i++ % 200) + 1}`, hoursReading: (reading += 1) }),
          }),
        SAMPLES,
      );
      const since = new Date(Date.now() - 400 * 86_400_000);
      since.setUTCDate(1);
      const month = await sequential(
        () => api.call(`/hours?assetId=a7&since=${since.toISOString()}&limit=50`),
        SAMPLES,
      );
      const byId = await sequential(() => api.call(`/hours/${old.id}`), SAMPLES);
      rounds.post.push(post.p50);
      rounds.assetPage.push(month.p50);
      rounds.oldById.push(byId.p50);
    }
  } finally {
    await api.close();
    await stop(server);
  }
  return Object.fromEntries(Object.entries(rounds).map(([k, xs]) => [`${k}P50Ms`, round(median(xs), 2)]));
}

if (!ONLY || ONLY === 'conversion') await conversion();
if (!ONLY || ONLY === 'scale') await scale();
const file = writeResults('partitions', results);
log(`results: ${file}`);
if (results.scale) {
  const s = results.scale as Record<string, Record<string, number>>;
  const [a, b] = [SIZES[0], SIZES[SIZES.length - 1]];
  if (a !== b) log(`POST /hours p50 at ${b} / at ${a}: ${round(s[b].postP50Ms / s[a].postP50Ms, 3)}`);
}
