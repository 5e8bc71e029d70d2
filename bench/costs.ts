// Benchmark of the cost reports on PostgreSQL, over 2,000 assets and two years: 2,000,000 meter logs (one in ten
// with the seed's fuel fields), 200,000 fuel entries (each with its reading's meter log; 10% partial, 1% void),
// 50,000 work-order lines (parts and labour on 10,000 work orders), 20,000 repairs and 20,000 expenses, bulk-loaded
// with generate_series. The API runs in a child process, the production entry (node dist/main.js: `npm run
// bench:costs` builds it first), measured over HTTP on loopback.
// - Each statement of the report alone (EXPLAIN ANALYZE): its time, JIT time and indexes.
// - GET /reports/costs?groupBy=asset over the last year: p50/p99 of BENCH_SAMPLES, and the server's CPU a request.
// - GET /assets/{id}/costs over the last year, a random asset each time: p50/p99, and the server's CPU a request.
// - The report as CSV (2,000 rows): time to the first row and to the end.
// - The CSV's streaming rate over a second organisation of BENCH_CSV_ASSETS meterless trailers (one row each):
//   rows per second end to end and from the first row to the last, and the server's peak RSS (VmRSS every 10 ms).
// Usage: npm run bench:costs. Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (fleet_bench_costs, prefix of a
// scratch database, dropped after unless BENCH_KEEP=1), BENCH_ASSETS (2000), BENCH_LOGS (2000000), BENCH_FILLS
// (200000), BENCH_LINES (50000), BENCH_CSV_ASSETS (100000), BENCH_SAMPLES (20), BENCH_PORT (4900).
import { createBenchTenant } from './lib/seed.ts';
import { seedCostFleet, seedCsvFleet } from './lib/costs-seed.ts';
import { API_ENTRY, requireBuild, startApi, stop } from './lib/server.ts';
import { cpuMs, statusMb } from './lib/proc.ts';
import { apiClient } from './lib/http-client.ts';
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
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, flag, log, num, text } from './lib/env.ts';
import { writeResults } from './lib/results.ts';
import { median, pct, round, timed } from './lib/stats.ts';

const NAME = text('BENCH_DB', 'fleet_bench_costs');
const FLEET = {
  assets: num('BENCH_ASSETS', 2_000),
  logs: num('BENCH_LOGS', 2_000_000),
  fills: num('BENCH_FILLS', 200_000),
  lines: num('BENCH_LINES', 50_000),
  days: 730,
};
const CSV_ASSETS = num('BENCH_CSV_ASSETS', 100_000);
const SAMPLES = num('BENCH_SAMPLES', 20);
const PORT = num('BENCH_PORT', 4900);
/** Keep the scratch database after the run (to EXPLAIN its statements by hand); its name is logged. */
const KEEP = flag('BENCH_KEEP');

/** Each statement of the report alone in PostgreSQL (EXPLAIN ANALYZE): its time, JIT time and indexes. */
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
  const out: Record<string, { ms: number; jitMs: number; indexes: string[] }> = {};
  for (const [name, run] of Object.entries(statements)) {
    const explaining = {
      ...sql,
      query: async <T>(q: string, params: unknown[] = []) => {
        const [row] = await sql.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q}`, params);
        const raw = row['QUERY PLAN'];
        const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
          'Execution Time': number;
          JIT?: { Timing: { Total: number } };
        }[];
        const json = JSON.stringify(plan);
        const indexes = [...new Set(json.match(/"Index Name":"[^"]+"/g) ?? [])].map((m) => m.slice(14, -1));
        if (/"Seq Scan"/.test(json)) indexes.push('Seq Scan');
        out[name] = { ms: round(plan['Execution Time'], 1), jitMs: round(plan.JIT?.Timing.Total ?? 0, 1), indexes };
        return [] as T[];
      },
    } as SqlRunner;
    await run(explaining, p);
    const o = out[name];
    log(`  ${name}: ${o.ms} ms (JIT ${o.jitMs} ms; ${o.indexes.join(', ')})`);
  }
  return out;
}

/**
 * One streamed GET: ms to the response head, to the first data row (the second line: the header is the first) and
 * to the end, and the lines received. The body is counted as it arrives, never kept.
 */
async function streamed(url: string, auth: Record<string, string>) {
  const t0 = performance.now();
  const res = await fetch(url, { headers: auth });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const headMs = performance.now() - t0;
  let lines = 0;
  let firstRowMs = NaN;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    if (Number.isNaN(firstRowMs) && lines >= 2) firstRowMs = performance.now() - t0;
  }
  return { headMs, firstRowMs, endMs: performance.now() - t0, rows: lines - 1 };
}

async function main() {
  requireBuild();
  const scratch = await createScratchDatabase(ADMIN_URL, NAME);
  const db = await openDatabase({
    databaseUrl: scratch.url,
    dataDir: 'unused',
    timeouts: { statementMs: 120_000, queryMs: 121_000 },
  });
  let api: Awaited<ReturnType<typeof startApi>>['server'] | null = null;
  let closeClient = async () => {};
  try {
    await migrate(db.sql);
    const tenant = await createBenchTenant(db, 'bench', { name: 'Bench Fleet', rateLimit: '100000000' });
    const trailers = await createBenchTenant(db, 'bench-csv', { name: 'Trailer Fleet', rateLimit: '100000000' });
    log(`seeding ${FLEET.assets} assets over ${FLEET.days} days`);
    await seedCostFleet(scratch.url, tenant.orgId, tenant.userId, FLEET);
    await seedCsvFleet(scratch.url, trailers.orgId, CSV_ASSETS);
    log('VACUUM ANALYZE');
    await db.sql.exec('VACUUM ANALYZE');

    // Figures even when a goal is missed: a slow report is measured, not cut at the production deadlines.
    ({ server: api } = await startApi({
      port: PORT,
      args: API_ENTRY.js,
      env: {
        DATABASE_URL: scratch.url,
        LOG_LEVEL: 'error',
        DB_STATEMENT_TIMEOUT_MS: '120000',
        DB_QUERY_TIMEOUT_MS: '121000',
        REQUEST_TIMEOUT_MS: '125000',
      },
    }));
    const server = api;
    const base = `http://127.0.0.1:${PORT}/api/v1`;
    const to = new Date().toISOString();
    const from = new Date(Date.now() - 365 * 86_400_000).toISOString();
    const client = apiClient(PORT, tenant.key);
    closeClient = client.close;
    const get = (path: string) => timed(() => client.call(path));

    const statements = await explainStatements(db.sql, tenant.orgId, from, to);
    const reportPath = `/reports/costs?groupBy=asset&from=${from}&to=${to}&limit=50`;
    for (let i = 0; i < 3; i++) await get(reportPath);
    const reportTimes: number[] = [];
    let cpu0 = cpuMs(server.pid);
    for (let i = 0; i < SAMPLES; i++) reportTimes.push(await get(reportPath));
    const reportCpuMs = (cpuMs(server.pid) - cpu0) / SAMPLES;
    log(
      `report by asset: p50 ${median(reportTimes).toFixed(1)} ms, p99 ${pct(reportTimes, 99).toFixed(1)} ms; server CPU ${reportCpuMs.toFixed(1)} ms a request`,
    );

    const assetPath = (i: number) =>
      `/assets/ca-${String(((i * 7919) % FLEET.assets) + 1).padStart(5, '0')}/costs?from=${from}&to=${to}`;
    for (let i = 0; i < 10; i++) await get(assetPath(i + 1000));
    const assetTimes: number[] = [];
    cpu0 = cpuMs(server.pid);
    for (let i = 0; i < SAMPLES * 5; i++) assetTimes.push(await get(assetPath(i)));
    const assetCpuMs = (cpuMs(server.pid) - cpu0) / (SAMPLES * 5);
    log(
      `asset costs: p50 ${median(assetTimes).toFixed(1)} ms, p99 ${pct(assetTimes, 99).toFixed(1)} ms; server CPU ${assetCpuMs.toFixed(2)} ms a request`,
    );

    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    const csvOf = (key: string) =>
      streamed(`${base}/reports/costs?groupBy=asset&from=${from}&to=${to}&format=csv`, auth(key));
    const rssBefore = statusMb(server.pid, 'VmRSS');
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, statusMb(server.pid, 'VmRSS'))), 10);
    const small = [];
    for (let i = 0; i < Math.max(3, SAMPLES / 4); i++) small.push(await csvOf(tenant.key));
    const smallPeak = peak;
    const large = [];
    for (let i = 0; i < 3; i++) large.push(await csvOf(trailers.key));
    clearInterval(sampler);
    const hwm = statusMb(server.pid, 'VmHWM');
    const summary = (runs: Awaited<ReturnType<typeof streamed>>[]) => {
      const endMs = median(runs.map((r) => r.endMs));
      const firstRowMs = median(runs.map((r) => r.firstRowMs));
      const rows = runs[0].rows;
      const streamMs = median(runs.map((r) => r.endMs - r.firstRowMs));
      return {
        rows,
        firstRowMs: round(firstRowMs, 1),
        endMs: round(endMs, 1),
        rowsPerSecond: Math.round((rows / endMs) * 1000),
        streamingRowsPerSecond: Math.round(((rows - 1) / streamMs) * 1000),
      };
    };
    const csv = {
      report: { ...summary(small), rssPeakMb: round(smallPeak, 0) },
      trailers: { ...summary(large), rssPeakMb: round(peak, 0) },
    };
    for (const [name, c] of Object.entries(csv))
      log(
        `CSV ${name}: ${c.rows} rows, first row ${c.firstRowMs} ms, end ${c.endMs} ms: ${c.rowsPerSecond} rows/s end to end, ${c.streamingRowsPerSecond} rows/s after the first row; server RSS peak ${c.rssPeakMb} MB`,
      );
    log(`server RSS ${rssBefore.toFixed(0)} MB before the CSV runs (VmHWM at the end ${hwm.toFixed(0)} MB)`);

    writeResults('costs', {
      ...FLEET,
      csvAssets: CSV_ASSETS,
      samples: SAMPLES,
      statements,
      reportByAsset: {
        p50Ms: round(median(reportTimes), 1),
        p99Ms: round(pct(reportTimes, 99), 1),
        serverCpuMs: round(reportCpuMs, 1),
      },
      csv: { ...csv, rssBeforeMb: round(rssBefore, 0), vmHwmMb: round(hwm, 0) },
      assetCosts: {
        p50Ms: round(median(assetTimes), 2),
        p99Ms: round(pct(assetTimes, 99), 2),
        serverCpuMs: round(assetCpuMs, 2),
      },
    });
  } finally {
    await closeClient();
    if (api) await stop(api);
    await db.close();
    if (KEEP) log(`kept ${scratch.url}`);
    else await scratch.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
