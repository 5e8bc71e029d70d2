// Benchmark of inspections on PostgreSQL.
// - POST /inspections: a 40-item pass_fail form with 3 failures (3 new flags, one critical: the asset goes out of
//   service), each on an asset of its own; p50/p99 over BENCH_SAMPLES, with and without an Idempotency-Key. Baseline
//   in the same run: the same submission with every item passing (no flag, no status change).
// - GET /inspections/summary over 10,000 assets and 1,000,000 inspections (bulk-loaded with generate_series, 5% of
//   the assets with an open inspection flag): p50/p99 of the first page (limit 200) and of a full walk of the
//   fleet (50 pages), and the statement alone in PostgreSQL with the indexes it uses.
// Usage: npm run bench:inspections. Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (fleet_bench_inspections, prefix
// of a scratch database, dropped after), BENCH_ASSETS (10000), BENCH_INSPECTIONS (1000000), BENCH_SAMPLES (200),
// BENCH_ROUNDS (3). Requests go through app.inject (in process, no network).
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type SqlRunner } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { inspectionSummary } from '../src/modules/inspections/inspections.repository.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, log, num, text } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { median, pct, round } from './lib/stats.ts';

const NAME = text('BENCH_DB', 'fleet_bench_inspections');
const ASSETS = num('BENCH_ASSETS', 10_000);
const INSPECTIONS = num('BENCH_INSPECTIONS', 1_000_000);
const SAMPLES = num('BENCH_SAMPLES', 200);
const ROUNDS = num('BENCH_ROUNDS', 3);

const ITEMS = Array.from({ length: 40 }, (_, i) => ({
  key: `item_${i + 1}`,
  label: `Item ${i + 1}`,
  type: 'pass_fail',
  required: true,
  critical: i < 5,
  photoRequiredOnFail: false,
  min: null,
  max: null,
}));

/** The fleet, one form, the inspections spread over 100 days, their summary rows and some open defects. */
async function seed(url: string, orgId: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('SET synchronous_commit = off');
    await c.query(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "createdAt")
       SELECT 'ba-' || lpad(g::text, 6, '0'), $1, 'Machine ' || g, 'off-road', 'HOURS', 'hrs', now() - interval '200 days'
       FROM generate_series(1, ${ASSETS}) g`,
      [orgId],
    );
    await c.query(`INSERT INTO inspection_forms (id, "orgId", name) VALUES ('bf-1', $1, 'Walk-around 40')`, [orgId]);
    await c.query(`INSERT INTO inspection_form_versions ("formId", version, items) VALUES ('bf-1', 1, $1::jsonb)`, [
      JSON.stringify(ITEMS),
    ]);
    // Inspection n is on asset n mod ASSETS, n / ASSETS days ago (plus a scatter); 1 in 20 fails.
    await c.query(
      `INSERT INTO inspections (id, "orgId", "assetId", "formId", "formVersion", "inspectedAt", result, "failedItems")
       SELECT 'bi-' || g, $1, 'ba-' || lpad((g % ${ASSETS} + 1)::text, 6, '0'), 'bf-1', 1,
         now() - (g / ${ASSETS}) * interval '1 day' - (g % 97) * interval '1 minute',
         CASE WHEN g % 20 = 0 THEN 'FAIL' ELSE 'PASS' END::"InspectionResult",
         CASE WHEN g % 20 = 0 THEN ARRAY['item_7'] ELSE ARRAY[]::text[] END
       FROM generate_series(1, ${INSPECTIONS}) g`,
      [orgId],
    );
    await c.query(
      `INSERT INTO asset_inspection_summaries ("assetId", "orgId", "lastInspectionId", "lastInspectedAt", "lastResult")
       SELECT DISTINCT ON ("assetId") "assetId", "orgId", id, "inspectedAt", result FROM inspections
       ORDER BY "assetId", "inspectedAt" DESC, id DESC`,
    );
    // Every 20th asset keeps a YELLOW defect open from its latest failed inspection.
    await c.query(
      `INSERT INTO flags (id, "orgId", "assetId", severity, note, "raisedById", "dedupeKey", "inspectionId")
       SELECT 'bfl-' || g, $1, 'ba-' || lpad(g::text, 6, '0'), 'YELLOW', 'Item 7 failed', 'system',
         'inspection:bf-1:item_7', 'bi-' || g
       FROM generate_series(20, ${ASSETS}, 20) g`,
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
    const orgs = createOrgAdmin(db);
    const org = await orgs.createOrg('Bench Fleet', 'bench');
    await orgs.createUser('bench', 'bench@example.com', 'Bench');
    const { key } = await orgs.createKey({
      orgSlug: 'bench',
      userEmail: 'bench@example.com',
      label: 'b',
      rateLimit: '100000000',
    });
    log(`seeding ${ASSETS} assets, ${INSPECTIONS} inspections`);
    await seed(url, org.id);

    const config = loadConfig({
      DATABASE_URL: url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'error',
    });
    const logger = pino({ level: 'error' }) as unknown as FastifyBaseLogger;
    const deps = createDeps(config, db, logger);
    const app = await buildApp(deps);
    const auth = { authorization: `Bearer ${key}` };

    // ---- submissions: one asset of its own per submission, so every failing one opens 3 new flags.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const fresh = ROUNDS * SAMPLES * 3 + 60;
    await c.query(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "createdAt")
       SELECT 'bs-' || g, $1, 'Submit ' || g, 'off-road', 'HOURS', 'hrs', now() - interval '1 day'
       FROM generate_series(1, ${fresh}) g`,
      [org.id],
    );
    await c.end();
    let next = 0;
    const submit = async (failing: boolean, idempotent: boolean) => {
      const assetId = `bs-${++next}`;
      const results = ITEMS.map((item, i) => ({ itemKey: item.key, pass: !(failing && [2, 19, 32].includes(i)) }));
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/inspections',
        headers: {
          ...auth,
          'content-type': 'application/json',
          ...(idempotent ? { 'idempotency-key': `bench-${assetId}` } : {}),
        },
        payload: JSON.stringify({ inspectionFormId: 'bf-1', assetId, inspectorName: 'Bench', results }),
      });
      if (res.statusCode !== 201) throw new Error(`POST /inspections ${res.statusCode} ${res.body}`);
      if (failing && res.json().flagIds.length !== 3) throw new Error(`expected 3 flags: ${res.body}`);
    };
    for (let i = 0; i < 20; i++) await submit(i % 2 === 0, false);
    const variants = [
      ['3 failures, no key', true, false],
      ['3 failures, Idempotency-Key', true, true],
      ['all pass, no key (baseline)', false, false],
    ] as const;
    const times: Record<string, number[]> = Object.fromEntries(variants.map(([l]) => [l, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [label, failing, idem] of r % 2 ? [...variants].reverse() : variants) {
        for (let i = 0; i < SAMPLES; i++) {
          const t = performance.now();
          await submit(failing, idem);
          times[label].push(performance.now() - t);
        }
      }
    }
    const submissions: Record<string, { p50Ms: number; p99Ms: number }> = {};
    for (const [label] of variants) {
      submissions[label] = { p50Ms: round(median(times[label]), 2), p99Ms: round(pct(times[label], 99), 2) };
      log(
        `POST /inspections ${label}: p50 ${median(times[label]).toFixed(2)} ms, p99 ${pct(times[label], 99).toFixed(2)} ms`,
      );
    }

    // ---- the fleet summary
    const get = async (path: string) => {
      const res = await app.inject({ method: 'GET', url: path, headers: auth });
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
      return res.json() as { assets: unknown[]; nextCursor: string | null };
    };
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const first = `/api/v1/inspections/summary?limit=200&since=${since}`;
    const pageTimes: number[] = [];
    const walkTimes: number[] = [];
    for (let i = 0; i < 10; i++) await get(first);
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      await get(first);
      pageTimes.push(performance.now() - t);
    }
    let walked = 0;
    for (let i = 0; i < Math.max(5, Math.round(SAMPLES / 20)); i++) {
      const t = performance.now();
      let cursor: string | null = null;
      walked = 0;
      do {
        const body = await get(`${first}${cursor ? `&cursor=${cursor}` : ''}`);
        walked += body.assets.length;
        cursor = body.nextCursor;
      } while (cursor);
      walkTimes.push(performance.now() - t);
    }
    if (walked < ASSETS) throw new Error(`the walk saw ${walked} assets`);
    log(`summary first page (200): p50 ${median(pageTimes).toFixed(2)} ms, p99 ${pct(pageTimes, 99).toFixed(2)} ms`);
    log(`summary, the whole fleet (${walked} assets): p50 ${median(walkTimes).toFixed(1)} ms`);

    const sqlTimes: number[] = [];
    let indexes = '';
    const explaining: SqlRunner = {
      ...db.sql,
      query: async <T>(q: string, params: unknown[] = []) => {
        const [row] = await db.sql.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q}`, params);
        const raw = row['QUERY PLAN'];
        const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { 'Execution Time': number }[];
        sqlTimes.push(plan['Execution Time']);
        const text = JSON.stringify(plan);
        indexes = [...new Set(text.match(/"Index Name":"[^"]+"/g) ?? [])].map((s) => s.slice(14, -1)).join(', ');
        if (/"Node Type":"Seq Scan"/.test(text)) indexes += ' (and a Seq Scan)';
        return [] as T[];
      },
    };
    for (let i = 0; i < 50; i++) await inspectionSummary(explaining, org.id, null, 201);
    log(`summary statement: p50 ${median(sqlTimes).toFixed(2)} ms in PostgreSQL (${indexes})`);

    writeResults('inspections', {
      assets: ASSETS,
      inspections: INSPECTIONS,
      samples: SAMPLES,
      rounds: ROUNDS,
      submissions,
      summary: {
        firstPage200: { p50Ms: round(median(pageTimes), 2), p99Ms: round(pct(pageTimes, 99), 2) },
        wholeFleet: { assets: walked, p50Ms: round(median(walkTimes), 1) },
        statement: { p50Ms: round(median(sqlTimes), 2), indexes },
      },
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
