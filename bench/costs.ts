// Benchmark of the cost reports on PostgreSQL, over 2,000 assets and two years: 2,000,000 meter logs (one in ten
// with the seed's fuel fields), 200,000 fuel entries (with readings; 10% partial, 1% void), 50,000 work-order lines
// (parts and labour on 10,000 work orders), 20,000 repairs and 20,000 expenses, bulk-loaded with generate_series.
// - GET /reports/costs?groupBy=asset over the last year: p50/p99 of BENCH_SAMPLES.
// - The same as CSV: time, rows per second, and the process's peak RSS (VmRSS sampled every 10 ms; the app runs in
//   this process through app.inject).
// - GET /assets/{id}/costs over the last year, a random asset each time: p50/p99.
// Usage: npm run bench:costs. Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (fleet_bench_costs, prefix of a
// scratch database, dropped after), BENCH_ASSETS (2000), BENCH_LOGS (2000000), BENCH_FILLS (200000),
// BENCH_LINES (50000), BENCH_SAMPLES (20).
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type SqlRunner } from '../src/db/database.ts';
import {
  economySegments,
  expenseCosts,
  fuelEntryCosts,
  lineCosts,
  meterLogFuelCosts,
  meterReadings,
  repairCosts,
} from '../src/modules/costs/costs.repository.ts';
import { migrate } from '../src/db/migrator.ts';
import { createBenchTenant } from './lib/seed.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, flag, log, num, text } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { median, pct, round } from './lib/stats.ts';

const NAME = text('BENCH_DB', 'fleet_bench_costs');
const ASSETS = num('BENCH_ASSETS', 2_000);
const LOGS = num('BENCH_LOGS', 2_000_000);
const FILLS = num('BENCH_FILLS', 200_000);
const LINES = num('BENCH_LINES', 50_000);
const SAMPLES = num('BENCH_SAMPLES', 20);
const DAYS = 730;
/** Keep the scratch database after the run (to EXPLAIN its statements by hand); its name is logged. */
const KEEP = flag('BENCH_KEEP');

const asset = (g: string) => `'ca-' || lpad((${g})::text, 5, '0')`;

async function seed(url: string, orgId: string, userId: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const q = (sql: string) => c.query(sql, [orgId]);
  try {
    await c.query('SET synchronous_commit = off');
    await q(`INSERT INTO yards (id, "orgId", name) SELECT 'cy-' || g, $1, 'Yard ' || g FROM generate_series(1, 20) g`);
    await q(
      `INSERT INTO projects (id, "orgId", name) SELECT 'cp-' || g, $1, 'Job ' || g FROM generate_series(1, 200) g`,
    );
    await q(
      `INSERT INTO parts (id, "orgId", number, name) SELECT 'cpt-' || g, $1, 'P' || g, 'Part ' || g FROM generate_series(1, 100) g`,
    );
    // Even assets are trucks (odometer, miles), odd ones machines (hours); all bought three years ago.
    await q(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "yardId", "purchaseCost",
         "purchaseDate", "usefulLifeYears", "depreciationMethod", "salvageValue", "createdAt")
       SELECT ${asset('g')}, $1, 'Unit ' || g, CASE WHEN g % 2 = 0 THEN 'on-road' ELSE 'off-road' END::"AssetClass",
         CASE WHEN g % 2 = 0 THEN 'ODOMETER' ELSE 'HOURS' END::"MeterType", CASE WHEN g % 2 = 0 THEN 'mi' ELSE 'hrs' END,
         'cy-' || (g % 20 + 1), 50000 + g, now() - interval '3 years', 7,
         CASE WHEN g % 3 = 0 THEN 'DECLINING_BALANCE' ELSE 'STRAIGHT_LINE' END::"DepreciationMethod", 5000, now() - interval '3 years'
       FROM generate_series(1, ${ASSETS}) g`,
    );
    const perAsset = Math.floor(LOGS / ASSETS);
    log(`meter logs: ${LOGS}`);
    // Log k of an asset is k steps into the two years; its reading grows 5 units a step; one in ten carries fuel.
    await q(
      `INSERT INTO meter_logs (id, "orgId", "assetId", "projectId", "hoursReading", delta, "fuelVolume", "fuelUnit",
         "fuelCostTotal", "loggedAt", source)
       SELECT 'cl-' || g, $1, ${asset(`g % ${ASSETS} + 1`)}, CASE WHEN g % 7 = 0 THEN 'cp-' || (g % 200 + 1) END,
         (g / ${ASSETS}) * 5.0, 5, CASE WHEN g % 10 = 0 THEN 40 END, CASE WHEN g % 10 = 0 THEN 'LITER' END,
         CASE WHEN g % 10 = 0 THEN 61.7 END,
         now() - interval '${DAYS} days' + (g / ${ASSETS}) * interval '${(DAYS * 86400) / perAsset} seconds', 'api'
       FROM generate_series(0, ${LOGS - 1}) g`,
    );
    log(`fuel entries: ${FILLS}`);
    const perAssetFills = Math.floor(FILLS / ASSETS);
    await q(
      `INSERT INTO fuel_entries (id, "orgId", "assetId", "fueledAt", volume, unit, "volumeLiters", "totalCost",
         "pricePerUnit", "meterReading", void, partial, "projectId")
       SELECT 'cf-' || g, $1, ${asset(`g % ${ASSETS} + 1`)},
         now() - interval '${DAYS} days' + (g / ${ASSETS}) * interval '${(DAYS * 86400) / perAssetFills} seconds' + interval '1 minute',
         20, 'GALLON', 75.70823568, 77.98, 3.899, (g / ${ASSETS}) * 50.0 + 1, g % 100 = 0, g % 10 = 3,
         CASE WHEN g % 5 = 0 THEN 'cp-' || (g % 200 + 1) END
       FROM generate_series(0, ${FILLS - 1}) g`,
    );
    const orders = LINES / 5;
    log(`work orders ${orders}, lines ${LINES}, repairs and expenses`);
    await c.query(
      `INSERT INTO work_orders (id, "orgId", number, "assetId", "projectId", title, "createdById", "createdAt")
       SELECT 'cw-' || g, $1, g, ${asset(`g % ${ASSETS} + 1`)}, CASE WHEN g % 3 = 0 THEN 'cp-' || (g % 200 + 1) END,
         'Service', $2, now() - (g % ${DAYS}) * interval '1 day'
       FROM generate_series(1, ${orders}) g`,
      [orgId, userId],
    );
    await q(
      `INSERT INTO work_order_part_lines (id, "orgId", "workOrderId", "partId", quantity, "unitCost", "totalCost", tracked, "createdAt")
       SELECT 'cpl-' || g, $1, 'cw-' || (g % ${orders} + 1), 'cpt-' || (g % 100 + 1), 2, 12.5, 25, true,
         now() - (g % ${DAYS}) * interval '1 day'
       FROM generate_series(1, ${LINES / 2}) g`,
    );
    await q(
      `INSERT INTO work_order_labor_lines (id, "orgId", "workOrderId", hours, rate, "totalCost", "createdAt")
       SELECT 'cll-' || g, $1, 'cw-' || (g % ${orders} + 1), 1.5, 90, 135, now() - (g % ${DAYS}) * interval '1 day'
       FROM generate_series(1, ${LINES / 2}) g`,
    );
    // Half the repairs are on work orders (with lines: not counted again), half stand alone.
    await q(
      `INSERT INTO repairs (id, "orgId", "assetId", "workOrderId", cost, "createdAt")
       SELECT 'cr-' || g, $1, ${asset(`g % ${ASSETS} + 1`)}, CASE WHEN g % 2 = 0 THEN 'cw-' || (g % ${orders} + 1) END,
         180.1, now() - (g % ${DAYS}) * interval '1 day'
       FROM generate_series(1, 20000) g`,
    );
    await q(
      `INSERT INTO expenses (id, "orgId", "assetId", type, amount, "incurredAt")
       SELECT 'ce-' || g, $1, ${asset(`g % ${ASSETS} + 1`)}, 'tolls', 12.4, now() - (g % ${DAYS}) * interval '1 day'
       FROM generate_series(1, 20000) g`,
    );
    log('VACUUM ANALYZE');
    await c.query('VACUUM ANALYZE');
  } finally {
    await c.end();
  }
}

/** Each statement of the report alone in PostgreSQL (EXPLAIN ANALYZE): its time and the indexes it reads. */
async function explainStatements(sql: SqlRunner, orgId: string, from: string, to: string) {
  const p = { orgId, from: new Date(from), to: new Date(to), assetId: null };
  const statements = {
    fuelEntryCosts,
    meterLogFuelCosts,
    expenseCosts,
    partLines: (s: SqlRunner, q: typeof p) => lineCosts(s, q, 'part'),
    laborLines: (s: SqlRunner, q: typeof p) => lineCosts(s, q, 'labor'),
    repairCosts,
    meterReadings,
    economySegments,
  };
  for (const [name, run] of Object.entries(statements)) {
    let line = '';
    const explaining = {
      ...sql,
      query: async <T>(q: string, params: unknown[] = []) => {
        const [row] = await sql.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q}`, params);
        const raw = row['QUERY PLAN'];
        const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { 'Execution Time': number }[];
        const text = JSON.stringify(plan);
        const indexes = [...new Set(text.match(/"Index Name":"[^"]+"/g) ?? [])].map((m) => m.slice(14, -1));
        line = `${plan['Execution Time'].toFixed(1)} ms (${indexes.join(', ')}${/"Seq Scan"/.test(text) ? ', Seq Scan' : ''})`;
        return [] as T[];
      },
    } as SqlRunner;
    await run(explaining, p);
    log(`  ${name}: ${line}`);
  }
}

function rssMb(): number {
  return process.memoryUsage().rss / 2 ** 20;
}

async function main() {
  const scratch = await createScratchDatabase(ADMIN_URL, NAME);
  // Figures even when a goal is missed: a slow report is measured, not cut at the production deadlines.
  const db = await openDatabase({
    databaseUrl: scratch.url,
    dataDir: 'unused',
    timeouts: { statementMs: 120_000, queryMs: 121_000 },
  });
  try {
    await migrate(db.sql);
    const tenant = await createBenchTenant(db, 'bench', { name: 'Bench Fleet', rateLimit: '100000000' });
    const { key } = tenant;
    log(`seeding ${ASSETS} assets over ${DAYS} days`);
    await seed(scratch.url, tenant.orgId, tenant.userId);

    const config = loadConfig({
      DATABASE_URL: scratch.url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'error',
      DB_STATEMENT_TIMEOUT_MS: '120000',
      DB_QUERY_TIMEOUT_MS: '121000',
      REQUEST_TIMEOUT_MS: '125000',
    });
    const app = await buildApp(createDeps(config, db, pino({ level: 'error' }) as unknown as FastifyBaseLogger));
    const auth = { authorization: `Bearer ${key}` };
    const to = new Date().toISOString();
    const from = new Date(Date.now() - 365 * 86_400_000).toISOString();
    const get = async (url: string) => {
      const t = performance.now();
      const res = await app.inject({ method: 'GET', url, headers: auth });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      return { ms: performance.now() - t, res };
    };

    await explainStatements(db.sql, tenant.orgId, from, to);
    const reportUrl = `/api/v1/reports/costs?groupBy=asset&from=${from}&to=${to}&limit=50`;
    for (let i = 0; i < 3; i++) await get(reportUrl);
    const reportTimes: number[] = [];
    for (let i = 0; i < SAMPLES; i++) reportTimes.push((await get(reportUrl)).ms);
    log(`report by asset: p50 ${median(reportTimes).toFixed(1)} ms, p99 ${pct(reportTimes, 99).toFixed(1)} ms`);

    let peak = rssMb();
    const before = peak;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 10);
    const csvTimes: number[] = [];
    let rows = 0;
    for (let i = 0; i < Math.max(3, SAMPLES / 4); i++) {
      const { ms, res } = await get(`/api/v1/reports/costs?groupBy=asset&from=${from}&to=${to}&format=csv`);
      csvTimes.push(ms);
      rows = res.body.split('\r\n').length - 2;
    }
    clearInterval(sampler);
    const csvMs = median(csvTimes);
    log(
      `CSV: ${rows} rows in ${csvMs.toFixed(1)} ms (${Math.round((rows / csvMs) * 1000)} rows/s), RSS peak ${peak.toFixed(0)} MB`,
    );

    const assetTimes: number[] = [];
    for (let i = 0; i < SAMPLES * 5; i++) {
      const id = `ca-${String(((i * 7919) % ASSETS) + 1).padStart(5, '0')}`;
      assetTimes.push((await get(`/api/v1/assets/${id}/costs?from=${from}&to=${to}`)).ms);
    }
    log(`asset costs: p50 ${median(assetTimes).toFixed(1)} ms, p99 ${pct(assetTimes, 99).toFixed(1)} ms`);

    writeResults('costs', {
      assets: ASSETS,
      meterLogs: LOGS,
      fuelEntries: FILLS,
      workOrderLines: LINES,
      samples: SAMPLES,
      reportByAsset: { p50Ms: round(median(reportTimes), 1), p99Ms: round(pct(reportTimes, 99), 1) },
      csv: {
        rows,
        p50Ms: round(csvMs, 1),
        rowsPerSecond: Math.round((rows / csvMs) * 1000),
        rssBeforeMb: round(before, 0),
        rssPeakMb: round(peak, 0),
      },
      assetCosts: { p50Ms: round(median(assetTimes), 2), p99Ms: round(pct(assetTimes, 99), 2) },
    });
    await app.close();
  } finally {
    await db.close();
    if (KEEP) log(`kept ${scratch.url}`);
    else await scratch.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
