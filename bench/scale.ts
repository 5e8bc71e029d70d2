// Scale benchmark: every read endpoint at production volume on PostgreSQL, page 1 against a deep page,
// sequential and 10 concurrent, each next to its raw baseline (the same query on the pg driver from this
// process), plus the CSV export rate and the two hot writes against their raw equivalents.
//
// Usage: npm run bench:scale                 seeds fleet_scale once (~3 min), then measures (~4 min)
//        npm run bench:scale -- --drop       drops the scale database
// Env: BENCH_DATABASE_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres),
//      BENCH_SCALE_DB (database name, default fleet_scale), BENCH_ROUNDS (alternating rounds, default 3),
//      BENCH_SAMPLES (requests per sequential measurement, default 60), BENCH_ONLY (a regex of endpoint names),
//      BENCH_CLIENT (undici, the default, or fetch: see bench/lib/http-client.ts), BENCH_PORT (the API's, 4320),
//      BENCH_API_ROOT (another checkout whose src/ is the API, for a before/after table), BENCH_SCALE_READINGS (the
//      first organisation's meter logs, default 1920000: another count is another seed, e.g. 20000000 in a database
//      of its own named by BENCH_SCALE_DB; the fleet's readings then spread over two years of monthly partitions).
import pg from 'pg';
import { ADMIN_URL, log, num } from './lib/env.ts';
import { apiClient, CLIENT, concurrent, sequential, type Stats } from './lib/http-client.ts';
import { writeResults } from './lib/results.ts';
import { dropScaleDatabase, ensureScaleDatabase } from './lib/scale/db.ts';
import { DEFAULT_READINGS, seededId } from './lib/scale/seed.ts';
import { measureWrites } from './lib/scale/writes.ts';
import { API_ENTRY, startApi, stop } from './lib/server.ts';
import { YARD_WITH_COUNTS_SQL } from '../src/modules/yards/yards.repository.ts';
import { statusMb } from './lib/proc.ts';
import { median, ms as f, round, timed } from './lib/stats.ts';

const DB_NAME = process.env.BENCH_SCALE_DB ?? 'fleet_scale';
const ROUNDS = num('BENCH_ROUNDS', 3);
const SAMPLES = num('BENCH_SAMPLES', 60);
const PORT = num('BENCH_PORT', 4320);
const READINGS = num('BENCH_SCALE_READINGS', DEFAULT_READINGS);

if (process.argv.includes('--drop')) {
  await dropScaleDatabase(ADMIN_URL, DB_NAME);
  log(`dropped ${DB_NAME}`);
  process.exit(0);
}

const scale = await ensureScaleDatabase(ADMIN_URL, DB_NAME, log, READINGS);
const pool = new pg.Pool({ connectionString: scale.url, max: 10 });
const { call, close: closeClient } = apiClient(PORT, scale.key);
const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
const id = (kind: string, n: number) => seededId(pool as unknown as pg.ClientBase, scale.tag, kind, n);

/** API sequential, API 10 concurrent and the raw query, in alternating rounds; the median of each figure. */
async function measure(api: () => Promise<unknown>, raw: (() => Promise<unknown>) | null) {
  await sequential(api, 5);
  const seq: Stats[] = [];
  const conc: Stats[] = [];
  const rawRuns: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    seq.push(await sequential(api, SAMPLES));
    conc.push(await concurrent(api, SAMPLES * 2));
    if (raw) rawRuns.push((await sequential(raw, SAMPLES)).p50);
  }
  const m = (xs: Stats[], k: keyof Stats) => median(xs.map((x) => x[k]));
  return {
    seqP50: m(seq, 'p50'),
    seqP99: m(seq, 'p99'),
    concP50: m(conc, 'p50'),
    concP99: m(conc, 'p99'),
    raw: raw ? median(rawRuns) : null,
  };
}

type Row = Awaited<ReturnType<typeof measure>> & { name: string };
const rows: Row[] = [];
// BENCH_ONLY=<regex> measures only the matching endpoints ("csv" and "writes" name the last two parts).
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : null;
const wanted = (name: string) => !only || only.test(name);
async function endpoint(name: string, path: string, raw: [string, unknown[]] | null) {
  if (!wanted(name)) return;
  const r = await measure(() => call(path), raw ? () => pool.query(raw[0], raw[1]) : null);
  rows.push({ name, ...r });
  log(`${name}: seq p50 ${r.seqP50.toFixed(1)} ms`);
}

/** The key of row `offset` (0-based) in a list's order: what the cursor of the page before holds. */
async function keyAt(sql: string, params: unknown[], offset: number): Promise<Record<string, unknown>> {
  const { rows: r } = await pool.query(`${sql} OFFSET ${offset} LIMIT 1`, params);
  if (!r[0]) throw new Error(`no row at ${offset}: ${sql}`);
  return r[0];
}
const iso = (d: unknown) => (d as Date).toISOString();
const deepPage = async (sql: string, params: unknown[], page: number, limit = 50) =>
  keyAt(sql, params, (page - 1) * limit - 1);

// The work-order queue's order as the API writes it (work-orders.repository.ts): dueAt ascending, undated last, as the
// descending key the queue indexes hold, so the raw baseline reads the same index.
const QUEUE_ORDER = `priority DESC, COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - "dueAt", INTERVAL '-1000000 years') DESC, "createdAt" DESC, id DESC`;

const { server: api } = await startApi({
  port: PORT,
  args: API_ENTRY.tsx,
  root: process.env.BENCH_API_ROOT,
  env: { DATABASE_URL: scale.url },
  inheritEnv: true,
});
try {
  const org = scale.orgId;
  const busyAsset = await id('a', 1);
  const usageProject = await id('p', 1);
  const busyTool = await id('t', 1);

  // Lists: page 1 and a deep page (500, or the last one where the list is shorter), raw = the same SQL.
  const lists: {
    name: string;
    path: string;
    order: string;
    from: string;
    key: (r: Record<string, unknown>) => unknown[];
    page: number;
    cols: string;
  }[] = [
    {
      name: 'assets',
      path: '/assets?limit=50',
      from: `assets WHERE "orgId" = $1`,
      order: `"createdAt" DESC, id DESC`,
      cols: `"createdAt", id`,
      key: (r) => [iso(r.createdAt), r.id],
      page: 500,
    },
    {
      name: 'hours (org-wide)',
      path: '/hours?limit=50',
      from: `meter_logs WHERE "orgId" = $1`,
      order: `"loggedAt" DESC, id DESC`,
      cols: `"loggedAt", id`,
      key: (r) => [iso(r.loggedAt), r.id],
      page: 500,
    },
    {
      name: 'hours (busy asset)',
      path: `/hours?limit=50&assetId=${busyAsset}`,
      from: `meter_logs WHERE "orgId" = $1 AND "assetId" = '${busyAsset}'`,
      order: `"loggedAt" DESC, id DESC`,
      cols: `"loggedAt", id`,
      key: (r) => [iso(r.loggedAt), r.id],
      page: 40,
    },
    {
      name: 'hours review queue',
      path: '/hours?limit=50&reviewStatus=PENDING',
      from: `meter_logs WHERE "orgId" = $1 AND "reviewStatus" = 'PENDING'`,
      order: `"loggedAt" DESC, id DESC`,
      cols: `"loggedAt", id`,
      key: (r) => [iso(r.loggedAt), r.id],
      page: 340,
    },
    {
      name: 'flags (all statuses)',
      path: '/flags?limit=50&status=OPEN,IN_PROGRESS,RESOLVED',
      from: `flags WHERE "orgId" = $1`,
      order: `"createdAt" DESC, id DESC`,
      cols: `"createdAt", id`,
      key: (r) => [iso(r.createdAt), r.id],
      page: 400,
    },
    {
      name: 'flags (default OPEN)',
      path: '/flags?limit=50',
      from: `flags WHERE "orgId" = $1 AND status = 'OPEN'`,
      order: `"createdAt" DESC, id DESC`,
      cols: `"createdAt", id`,
      key: (r) => [iso(r.createdAt), r.id],
      page: 80,
    },
    {
      name: 'repairs',
      path: '/repairs?limit=50',
      from: `repairs WHERE "orgId" = $1`,
      order: `"createdAt" DESC, id DESC`,
      cols: `"createdAt", id`,
      key: (r) => [iso(r.createdAt), r.id],
      page: 500,
    },
    {
      name: 'work orders (active queue)',
      path: '/work-orders?limit=50',
      from: `work_orders WHERE "orgId" = $1 AND status IN ('OPEN','ASSIGNED','IN_PROGRESS','ON_HOLD')`,
      order: QUEUE_ORDER,
      cols: `priority, "dueAt", "createdAt", id`,
      key: (r) => [r.priority, r.dueAt ? iso(r.dueAt) : null, iso(r.createdAt), r.id],
      page: 360,
    },
    {
      name: 'work orders (status=DONE)',
      path: '/work-orders?limit=50&status=DONE',
      from: `work_orders WHERE "orgId" = $1 AND status = 'DONE'`,
      order: QUEUE_ORDER,
      cols: `priority, "dueAt", "createdAt", id`,
      key: (r) => [r.priority, r.dueAt ? iso(r.dueAt) : null, iso(r.createdAt), r.id],
      page: 500,
    },
    {
      name: 'tools',
      path: '/tools?limit=50',
      from: `tools WHERE "orgId" = $1 AND status <> 'RETIRED'`,
      order: `name, id`,
      cols: 'name, id',
      key: (r) => [r.name, r.id],
      page: 500,
    },
    {
      name: 'projects',
      path: '/projects?limit=50',
      from: `projects WHERE "orgId" = $1 AND status = 'ACTIVE'`,
      order: `"createdAt" DESC, id DESC`,
      cols: `"createdAt", id`,
      key: (r) => [iso(r.createdAt), r.id],
      page: 8,
    },
  ];
  for (const l of lists) {
    const rawSql = (extra: string) => `SELECT * FROM ${l.from}${extra} ORDER BY ${l.order} LIMIT 51`;
    await endpoint(`${l.name}, page 1`, l.path, [rawSql(''), [org]]);
    const k = await deepPage(`SELECT ${l.cols} FROM ${l.from} ORDER BY ${l.order}`, [org], l.page);
    await endpoint(`${l.name}, page ${l.page}`, `${l.path}&cursor=${cursor(l.key(k))}`, null);
  }
  // Tool events of the busy tool (2,500): page 1 and page 50; the cursor is an event id.
  const evFrom = `tool_events WHERE "toolId" = '${busyTool}' AND "orgId" = $1`;
  await endpoint('tool events (busy tool), page 1', `/tools/${busyTool}/events?limit=50`, [
    `SELECT * FROM ${evFrom} ORDER BY "createdAt" DESC, id DESC LIMIT 51`,
    [org],
  ]);
  const ev = await deepPage(`SELECT id FROM ${evFrom} ORDER BY "createdAt" DESC, id DESC`, [org], 50);
  await endpoint('tool events (busy tool), page 50', `/tools/${busyTool}/events?limit=50&cursor=${ev.id}`, null);
  await endpoint('yards', '/yards?limit=50', [
    `SELECT * FROM yards WHERE "orgId" = $1 ORDER BY name, id LIMIT 51`,
    [org],
  ]);
  // One yard's detail: 2,000 of the 100,000 assets are in each of the 50 yards.
  const yard = await id('y', 1);
  await endpoint('yard detail (2,000 assets)', `/yards/${yard}`, [YARD_WITH_COUNTS_SQL, [yard, org]]);
  await endpoint('tools lowStock', '/tools?limit=50&lowStock=true', [
    `SELECT * FROM tools WHERE "orgId" = $1 AND "isConsumable" AND "stockLevel" <= COALESCE("minStockLevel", 5) ORDER BY name, id LIMIT 51`,
    [org],
  ]);
  await endpoint('tools pmOverdue', '/tools?limit=50&pmOverdue=true', [
    `SELECT * FROM tools WHERE "orgId" = $1 AND "pmIntervalDays" > 0 AND COALESCE("lastServicedAt", "createdAt") + "pmIntervalDays" * INTERVAL '1 day' <= now() ORDER BY name, id LIMIT 51`,
    [org],
  ]);
  await endpoint('tools warrantyExpiringDays=30', '/tools?limit=50&warrantyExpiringDays=30', [
    `SELECT * FROM tools WHERE "orgId" = $1 AND "warrantyEndDate" BETWEEN now() AND now() + interval '30 days' ORDER BY name, id LIMIT 51`,
    [org],
  ]);
  await endpoint('tool utilization (busy tool, 365 d)', `/tools/${busyTool}/utilization?days=365`, [
    `SELECT kind, "holderUserId", "createdAt" FROM tool_events WHERE "toolId" = '${busyTool}' AND "orgId" = $1 AND kind IN ('CHECK_OUT','CHECK_IN') AND "createdAt" >= now() - interval '365 days' ORDER BY "createdAt", id`,
    [org],
  ]);
  await endpoint('equipment-usage (80,000 logs)', `/projects/${usageProject}/equipment-usage`, [
    `SELECT u.*, a.nickname FROM project_asset_usage u CROSS JOIN LATERAL (SELECT nickname FROM assets WHERE id = u."assetId" AND "orgId" = $1 LIMIT 1) a WHERE u."projectId" = '${usageProject}' AND u."orgId" = $1 ORDER BY u.hours DESC LIMIT 101`,
    [org],
  ]);
  const usageBytes = (await call(`/projects/${usageProject}/equipment-usage`)).byteLength;

  console.log(
    `\nPostgreSQL ${(await pool.query('SHOW server_version')).rows[0].server_version}; client ${CLIENT}; medians of ${ROUNDS} alternating rounds; ${SAMPLES} sequential / ${SAMPLES * 2} requests at 10 concurrent per round\n`,
  );
  console.log('| Endpoint | p50 seq | p99 seq | p50 10-conc | p99 10-conc | raw SQL p50 | API / raw |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${f(r.seqP50)} | ${f(r.seqP99)} | ${f(r.concP50)} | ${f(r.concP99)} | ${r.raw === null ? '' : f(r.raw)} | ${r.raw === null ? '' : `${(r.seqP50 / r.raw).toFixed(1)}x`} |`,
    );
  }
  const deep: Record<string, number> = {};
  console.log('\nDeep page / page 1 (sequential p50):');
  for (let i = 0; i < rows.length - 1; i++) {
    const [a, b] = [rows[i], rows[i + 1]];
    if (a.name.endsWith('page 1') && b.name.startsWith(a.name.slice(0, -1))) {
      deep[a.name.slice(0, -8)] = round(b.seqP50 / a.seqP50, 2);
      console.log(`  ${a.name.slice(0, -8).padEnd(28)} ${(b.seqP50 / a.seqP50).toFixed(2)}x`);
    }
  }
  console.log(`\nequipment-usage response: ${(usageBytes / 1024).toFixed(1)} KiB`);

  // CSV export of every tool (50,000 rows): rows/s against one raw SELECT of the same rows, and the server's RSS.
  let csv = null;
  if (wanted('csv')) {
    const rssBefore = statusMb(api.pid, 'VmRSS');
    const csvRuns: number[] = [];
    const copyRuns: number[] = [];
    let csvRows = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t = performance.now();
      const body = Buffer.from(await call('/tools?format=csv'));
      csvRuns.push(performance.now() - t);
      csvRows = body.toString('utf8').split('\r\n').length - 2;
      copyRuns.push(await timed(() => pool.query(`SELECT * FROM tools WHERE "orgId" = $1 ORDER BY name, id`, [org])));
    }
    const rssAfter = statusMb(api.pid, 'VmRSS');
    csv = {
      rows: csvRows,
      rowsPerSecond: Math.round(csvRows / (median(csvRuns) / 1000)),
      rawRowsPerSecond: Math.round(csvRows / (median(copyRuns) / 1000)),
      rssBeforeMb: round(rssBefore, 0),
      rssAfterMb: round(rssAfter, 0),
    };
    console.log(
      `CSV export: ${csv.rows} rows, ${csv.rowsPerSecond} rows/s (raw SELECT of every row on pg ${csv.rawRowsPerSecond} rows/s); server RSS ${csv.rssBeforeMb} -> ${csv.rssAfterMb} MiB over ${ROUNDS} exports`,
    );
  }
  const writes = wanted('writes')
    ? await measureWrites(call, pool, scale, id, { rounds: ROUNDS, samples: SAMPLES })
    : null;
  writeResults('scale', {
    client: CLIENT,
    rounds: ROUNDS,
    samples: SAMPLES,
    endpoints: rows.map((r) => ({
      name: r.name,
      seqP50Ms: round(r.seqP50, 2),
      seqP99Ms: round(r.seqP99, 2),
      concP50Ms: round(r.concP50, 2),
      concP99Ms: round(r.concP99, 2),
      rawP50Ms: r.raw === null ? null : round(r.raw, 2),
    })),
    deepPageOverPage1: deep,
    equipmentUsageBytes: usageBytes,
    csv,
    writes,
  });
} finally {
  await stop(api);
  await Promise.all([pool.end(), closeClient()]);
}
