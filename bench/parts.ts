// Benchmark of the storeroom on PostgreSQL, with 10,000 parts stocked in 10 yards (100,000 stock rows and cost
// layers) and 1,000,000 ledger entries, bulk-loaded with generate_series:
// - POST /work-orders/{id}/parts (issue 1 unit of a random part from a random yard, FIFO): p50/p99, and as a
//   baseline in the same run POST /work-orders/{id}/labor (the same order lock and line insert, no stock);
// - 20 concurrent issues of the last 5 units of one part: 5 succeed, 15 answer 409, none oversells; wall time;
// - GET /inventory/valuation (first page and the total over every row), and the full CSV export.
// Usage: npm run bench:parts. Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (fleet_bench_parts, prefix of a scratch
// database, dropped after), BENCH_PARTS (10000), BENCH_YARDS (10), BENCH_LEDGER (1000000), BENCH_SAMPLES (200).
// Requests go through app.inject (in process, no network).
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createBenchTenant } from './lib/seed.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, log, num, text } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { median, pct, round } from './lib/stats.ts';

const NAME = text('BENCH_DB', 'fleet_bench_parts');
const PARTS = num('BENCH_PARTS', 10_000);
const YARDS = num('BENCH_YARDS', 10);
const LEDGER = num('BENCH_LEDGER', 1_000_000);
const SAMPLES = num('BENCH_SAMPLES', 200);

const partId = (n: number) => `bp-${String(n).padStart(6, '0')}`;
const yardId = (n: number) => `by-${String(n).padStart(3, '0')}`;

/** Yards, parts, 100 units at 5.00 of every part in every yard (one layer each), and the ledger's history. */
async function seed(url: string, orgId: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('SET synchronous_commit = off');
    await c.query(
      `INSERT INTO yards (id, "orgId", name) SELECT 'by-' || lpad(g::text, 3, '0'), $1, 'Yard ' || g
       FROM generate_series(1, ${YARDS}) g`,
      [orgId],
    );
    await c.query(
      `INSERT INTO parts (id, "orgId", number, name, "unitCost", "reorderPoint")
       SELECT 'bp-' || lpad(g::text, 6, '0'), $1, 'PN-' || g, 'Part ' || g, 5, 10 FROM generate_series(1, ${PARTS}) g`,
      [orgId],
    );
    await c.query(
      `INSERT INTO part_stock ("orgId", "partId", "yardId", "onHand", value)
       SELECT $1, p.id, y.id, 100, 500 FROM parts p CROSS JOIN yards y WHERE p."orgId" = $1 AND y."orgId" = $1`,
      [orgId],
    );
    await c.query(
      `INSERT INTO inventory_cost_layers (id, "orgId", "partId", "yardId", quantity, "unitCost", remaining,
         "remainingValue", "receivedAt")
       SELECT gen_random_uuid()::text, "orgId", "partId", "yardId", 100, 5, 100, 500, now() - interval '30 days'
       FROM part_stock WHERE "orgId" = $1`,
      [orgId],
    );
    // History: entry n is on part n mod PARTS, yard n mod YARDS, spread over the last 100 days.
    await c.query(
      `INSERT INTO inventory_ledger (id, "orgId", "partId", "yardId", type, quantity, "previousQuantity",
         "currentQuantity", "unitCost", "totalCost", "sourceType", "sourceId", "createdAt")
       SELECT gen_random_uuid()::text, $1, 'bp-' || lpad((g % ${PARTS} + 1)::text, 6, '0'),
         'by-' || lpad((g % ${YARDS} + 1)::text, 3, '0'), 'receipt', 1, 99, 100, 5, 5, 'purchase_order', 'po-' || g,
         now() - (g::float / ${LEDGER}) * interval '100 days'
       FROM generate_series(1, ${LEDGER}) g`,
      [orgId],
    );
    log('VACUUM ANALYZE');
    await c.query('VACUUM ANALYZE');
  } finally {
    await c.end();
  }
}

async function main() {
  const scratch = await createScratchDatabase(ADMIN_URL, NAME);
  const url = scratch.url;
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  try {
    await migrate(db.sql);
    const tenant = await createBenchTenant(db, 'bench', { name: 'Bench Fleet', rateLimit: '100000000' });
    const { key } = tenant;
    log(`seeding ${PARTS} parts in ${YARDS} yards, ${LEDGER} ledger entries`);
    await seed(url, tenant.orgId);

    const config = loadConfig({
      DATABASE_URL: url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'error',
    });
    const logger = pino({ level: 'error' }) as unknown as FastifyBaseLogger;
    const app = await buildApp(createDeps(config, db, logger));
    const auth = { authorization: `Bearer ${key}` };
    const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      app.inject({
        method,
        url,
        headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });

    const wo = await call('POST', '/api/v1/work-orders', { title: 'Bench' });
    const workOrderId = wo.json().workOrderId as string;

    // ---- issuing
    const issue = (part: string, yard: string) =>
      call('POST', `/api/v1/work-orders/${workOrderId}/parts`, { partId: part, yardId: yard, quantity: 1 });
    const rand = (n: number) => 1 + Math.floor(Math.random() * n);
    for (let i = 0; i < 20; i++) await issue(partId(rand(PARTS)), yardId(rand(YARDS)));
    // Baseline in the same run, interleaved: a labour line (the same work-order lock and line insert, no stock).
    const issueTimes: number[] = [];
    const laborTimes: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      let t = performance.now();
      const res = await issue(partId(rand(PARTS)), yardId(rand(YARDS)));
      issueTimes.push(performance.now() - t);
      if (res.statusCode !== 201) throw new Error(`issue: ${res.statusCode} ${res.body}`);
      t = performance.now();
      const labor = await call('POST', `/api/v1/work-orders/${workOrderId}/labor`, { hours: 1.5, rate: 80 });
      laborTimes.push(performance.now() - t);
      if (labor.statusCode !== 201) throw new Error(`labor: ${labor.statusCode} ${labor.body}`);
    }
    log(`issue a part: p50 ${median(issueTimes).toFixed(2)} ms, p99 ${pct(issueTimes, 99).toFixed(2)} ms`);
    log(`baseline, a labour line: p50 ${median(laborTimes).toFixed(2)} ms, p99 ${pct(laborTimes, 99).toFixed(2)} ms`);

    // ---- the race for the last units: 5 left of part 1 in yard 1 (95 written off first)
    const racePart = partId(1);
    await call('POST', `/api/v1/parts/${racePart}/adjustments`, {
      yardId: yardId(1),
      countedQuantity: 5,
      reason: 'count',
    });
    const raceStart = performance.now();
    const raced = await Promise.all(Array.from({ length: 20 }, () => issue(racePart, yardId(1))));
    const raceMs = performance.now() - raceStart;
    const won = raced.filter((r) => r.statusCode === 201).length;
    const refused = raced.filter((r) => r.statusCode === 409).length;
    const [left] = await db.sql.query<{ onHand: string }>(
      `SELECT "onHand"::text AS "onHand" FROM part_stock WHERE "orgId" = $1 AND "partId" = $2 AND "yardId" = $3`,
      [tenant.orgId, racePart, yardId(1)],
    );
    if (won !== 5 || refused !== 15 || Number(left.onHand) !== 0)
      throw new Error(`race: ${won} issued, ${refused} refused, ${left.onHand} left`);
    log(`20 concurrent issues of the last 5 units: ${won} issued, ${refused} refused, ${raceMs.toFixed(1)} ms`);

    // ---- valuation
    const valuationTimes: number[] = [];
    for (let i = 0; i < 5; i++) await call('GET', '/api/v1/inventory/valuation');
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      const res = await call('GET', '/api/v1/inventory/valuation?limit=200');
      valuationTimes.push(performance.now() - t);
      if (res.statusCode !== 200) throw new Error(`valuation: ${res.statusCode}`);
    }
    log(`valuation page (200 rows) and total: p50 ${median(valuationTimes).toFixed(2)} ms`);
    const csvTimes: number[] = [];
    let csvRows = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const res = await call('GET', '/api/v1/inventory/valuation?format=csv');
      csvTimes.push(performance.now() - t);
      csvRows = res.body.split('\r\n').length - 2;
    }
    log(`valuation CSV (${csvRows} rows): p50 ${median(csvTimes).toFixed(1)} ms`);

    writeResults('parts', {
      parts: PARTS,
      yards: YARDS,
      ledgerEntries: LEDGER,
      samples: SAMPLES,
      issue: { p50Ms: round(median(issueTimes), 2), p99Ms: round(pct(issueTimes, 99), 2) },
      laborLineBaseline: { p50Ms: round(median(laborTimes), 2), p99Ms: round(pct(laborTimes, 99), 2) },
      raceForLastUnits: { requests: 20, issued: won, refused, wallMs: round(raceMs, 1) },
      valuation: { page200AndTotalP50Ms: round(median(valuationTimes), 2) },
      valuationCsv: { rows: csvRows, p50Ms: round(median(csvTimes), 1) },
    });
    await app.close();
  } finally {
    await db.close();
    await scratch.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
