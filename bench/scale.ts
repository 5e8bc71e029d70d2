/* eslint-disable max-lines -- one benchmark run end to end (seed, every endpoint, the table) */
// Scale benchmark (issue 11): every read endpoint at production volume on PostgreSQL, page 1 against a deep
// page, sequential and 10 concurrent, each next to its raw baseline (the same query on the pg driver from
// this process), plus the CSV export rate and the two hot writes against their raw equivalents.
//
// Usage: npm run bench:scale                 seeds fleet_scale once (~8 min), then measures (~3 min)
//        npm run bench:scale -- --drop       drops the scale database
// Env: BENCH_DATABASE_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres),
//      BENCH_SCALE_DB (database name, default fleet_scale), BENCH_ROUNDS (alternating rounds, default 3),
//      BENCH_SAMPLES (requests per sequential measurement, default 60),
//      BENCH_CLIENT (undici, the default: requests on a pool of 10 keep-alive connections, as a load tool or a
//      server-side integrator sends them; fetch: Node's fetch, whose own CPU on the shared cores adds to the tail).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { createSpreadOrgs, dropScaleDatabase, ensureScaleDatabase, removeBenchWrites } from './scale-db.ts';
import { seededId } from './scale-seed.ts';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DB_NAME = process.env.BENCH_SCALE_DB ?? 'fleet_scale';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
const PORT = 4320;
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

if (process.argv.includes('--drop')) {
  await dropScaleDatabase(ADMIN_URL, DB_NAME);
  log(`dropped ${DB_NAME}`);
  process.exit(0);
}

const scale = await ensureScaleDatabase(ADMIN_URL, DB_NAME, log);
const pool = new pg.Pool({ connectionString: scale.url, max: 10 });
const auth = { authorization: `Bearer ${scale.key}`, 'content-type': 'application/json' };
const base = `http://127.0.0.1:${PORT}/api/v1`;
const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
const id = (kind: string, n: number) => seededId(pool as unknown as pg.ClientBase, scale.tag, kind, n);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs: number[]) => pct(xs, 50);

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const CLIENT = process.env.BENCH_CLIENT ?? 'undici';
if (CLIENT !== 'undici' && CLIENT !== 'fetch') throw new Error('BENCH_CLIENT is undici or fetch');
const http = new HttpPool(`http://127.0.0.1:${PORT}`, { connections: 10, pipelining: 1 });

async function call(path: string, init: { method?: 'GET' | 'POST'; body?: string; key?: string } = {}) {
  const headers = init.key ? { ...auth, authorization: `Bearer ${init.key}` } : auth;
  if (CLIENT === 'fetch') {
    const res = await fetch(`${base}${path}`, { headers, method: init.method, body: init.body });
    const body = await res.arrayBuffer();
    if (!res.ok)
      throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${Buffer.from(body).toString().slice(0, 300)}`);
    return body;
  }
  const res = await http.request({
    path: `/api/v1${path}`,
    method: init.method ?? 'GET',
    headers,
    body: init.body,
  });
  const body = await res.body.arrayBuffer();
  if (res.statusCode >= 400)
    throw new Error(`${init.method ?? 'GET'} ${path}: ${res.statusCode} ${Buffer.from(body).toString().slice(0, 300)}`);
  return body;
}

interface Stats {
  p50: number;
  p99: number;
}
async function sequential(fn: () => Promise<unknown>, n = SAMPLES): Promise<Stats> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await timed(fn));
  return { p50: median(xs), p99: pct(xs, 99) };
}
async function concurrent(fn: () => Promise<unknown>, n = SAMPLES * 2, workers = 10): Promise<Stats> {
  const xs: number[] = [];
  let left = n;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (left-- > 0) xs.push(await timed(fn));
    }),
  );
  return { p50: median(xs), p99: pct(xs, 99) };
}

/** API sequential, API 10 concurrent and the raw query, in alternating rounds; the median of each figure. */
async function measure(api: () => Promise<unknown>, raw: (() => Promise<unknown>) | null) {
  await sequential(api, 5);
  const seq: Stats[] = [];
  const conc: Stats[] = [];
  const rawRuns: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    seq.push(await sequential(api));
    conc.push(await concurrent(api));
    if (raw) rawRuns.push((await sequential(raw)).p50);
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

// The work-order queue's order as the API writes it (work-orders.queue.ts): dueAt ascending, undated last, as the
// descending key the queue indexes hold, so the raw baseline reads the same index.
const QUEUE_ORDER = `priority DESC, COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - "dueAt", INTERVAL '-1000000 years') DESC, "createdAt" DESC, id DESC`;

const api = fork(fileURLToPath(new URL('../src/main.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx'],
  env: {
    ...process.env,
    DATABASE_URL: scale.url,
    PORT: String(PORT),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
  },
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
const children: ChildProcess[] = [api];
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      /* starting */
    }
    if (i > 150) throw new Error('API did not become healthy');
    await new Promise((r) => setTimeout(r, 200));
  }
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
  const f = (x: number) => `${x.toFixed(1)} ms`;
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${f(r.seqP50)} | ${f(r.seqP99)} | ${f(r.concP50)} | ${f(r.concP99)} | ${r.raw === null ? '' : f(r.raw)} | ${r.raw === null ? '' : `${(r.seqP50 / r.raw).toFixed(1)}x`} |`,
    );
  }
  console.log('\nDeep page / page 1 (sequential p50):');
  for (let i = 0; i < rows.length - 1; i++) {
    const [a, b] = [rows[i], rows[i + 1]];
    if (a.name.endsWith('page 1') && b.name.startsWith(a.name.slice(0, -1)))
      console.log(`  ${a.name.slice(0, -8).padEnd(28)} ${(b.seqP50 / a.seqP50).toFixed(2)}x`);
  }
  console.log(`\nequipment-usage response: ${(usageBytes / 1024).toFixed(1)} KiB`);

  // CSV export of every tool (50,000 rows): rows/s against one raw SELECT of the same rows, and the server's RSS.
  const rss = () => Number(require_rss(api.pid!));
  if (wanted('csv')) {
    const rssBefore = rss();
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
    const rssAfter = rss();
    const csvMs = median(csvRuns);
    console.log(
      `CSV export: ${csvRows} rows, ${Math.round(csvRows / (csvMs / 1000))} rows/s (raw SELECT of every row on pg ${Math.round(csvRows / (median(copyRuns) / 1000))} rows/s); server RSS ${(rssBefore / 1024).toFixed(0)} -> ${(rssAfter / 1024).toFixed(0)} MiB over ${ROUNDS} exports`,
    );
  }
  if (wanted('writes')) {
    // Writes: POST /hours against the same transaction hand-written on pg; POST /work-orders at 10 concurrent.
    const hourAssets = await Promise.all(Array.from({ length: 20 }, (_, i) => id('a', 50_000 + i)));
    // Above every reading an earlier run left, so each POST /hours is a plain forward reading (not one for review).
    const { rows: last } = await pool.query(
      `SELECT coalesce(max("lastMeterReading"), 0)::float8 AS r FROM assets WHERE id = ANY($1)`,
      [hourAssets],
    );
    let reading = Math.max(100_000, Math.ceil(last[0].r) + 1);
    // What the writes add is removed afterwards (below), so every run measures the seeded volumes.
    const { rows: seqBefore } = await pool.query(`SELECT "workOrderSeq" AS n FROM organizations WHERE id = $1`, [org]);
    const writesStarted = new Date();
    const postHours = () =>
      call('/hours', {
        method: 'POST',
        body: JSON.stringify({
          assetId: hourAssets[reading % 20],
          hoursReading: ++reading,
          note: 'bench (concurrent readings may arrive out of order)',
        }),
      });
    const rawHours = async () => {
      const c = await pool.connect();
      try {
        const assetId = hourAssets[reading % 20];
        await c.query('BEGIN');
        await c.query(`SELECT * FROM assets WHERE id = $1 AND "orgId" = $2 FOR UPDATE`, [assetId, org]);
        const logId = randomUUID();
        await c.query(
          `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt") VALUES ($1, $2, $3, $4, 1, now())`,
          [logId, org, assetId, ++reading],
        );
        await c.query(`UPDATE assets SET "lastMeterReading" = $2, "lastMeterAt" = now() WHERE id = $1`, [
          assetId,
          reading,
        ]);
        await c.query(`INSERT INTO events (id, "orgId", type, data) VALUES ($1, $2, 'hours.logged', '{}')`, [
          randomUUID(),
          org,
        ]);
        await c.query('COMMIT');
      } finally {
        c.release();
      }
    };
    // Warm-up as every read endpoint gets (JIT, pool connections), so round 1 does not measure start-up.
    await concurrent(postHours, 50);
    await concurrent(rawHours, 50);
    const postWorkOrder = () => call('/work-orders', { method: 'POST', body: JSON.stringify({ title: 'bench' }) });
    await concurrent(postWorkOrder, 50);
    const writeRuns = { api: [] as number[], raw: [] as number[], hours: [] as Stats[] };
    for (let r = 0; r < ROUNDS; r++) {
      const n = SAMPLES * 2;
      let stats: Stats | undefined;
      writeRuns.api.push(n / ((await timed(async () => (stats = await concurrent(postHours, n)))) / 1000));
      writeRuns.hours.push(stats!);
      writeRuns.raw.push(n / ((await timed(() => concurrent(rawHours, n))) / 1000));
    }
    // p99 of 120 requests is their second slowest: the work orders get 600 per round so the tail is a percentile.
    // Beside them, in alternating rounds, the same create spread over ten organisations (the same statement with no
    // lock shared by the requests) and GET /health: what this machine's tail is without the number lock.
    const spreadKeys = await createSpreadOrgs(scale.url, 10);
    let spreadTurn = 0;
    const postSpread = () =>
      call('/work-orders', {
        method: 'POST',
        body: JSON.stringify({ title: 'bench' }),
        key: spreadKeys[spreadTurn++ % spreadKeys.length],
      });
    const health = () => call('/health');
    await concurrent(postSpread, 50);
    const woN = Math.max(600, SAMPLES * 2);
    const woRuns: Stats[] = [];
    const spreadRuns: Stats[] = [];
    const healthRuns: Stats[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      woRuns.push(await concurrent(postWorkOrder, woN));
      spreadRuns.push(await concurrent(postSpread, woN));
      healthRuns.push(await concurrent(health, woN));
    }
    const { rows: gaps } = await pool.query(
      `SELECT count(*)::int AS n, max(number) - min(number) + 1 AS span FROM work_orders WHERE "orgId" = $1`,
      [org],
    );

    const apiW = median(writeRuns.api);
    const rawW = median(writeRuns.raw);
    console.log(
      `POST /hours at 10 concurrent: ${apiW.toFixed(0)}/s; the same transaction on raw pg ${rawW.toFixed(0)}/s: ${(apiW / rawW).toFixed(2)}x`,
    );
    const spread = (runs: Stats[]) => {
      const p50 = median(runs.map((x) => x.p50));
      const p99 = median(runs.map((x) => x.p99));
      return `p50 ${f(p50)}, p99 ${f(p99)} (p99/p50 ${(p99 / p50).toFixed(2)})`;
    };
    console.log(
      `POST /work-orders at 10 concurrent, one organisation: ${spread(woRuns)}; numbers ${gaps[0].n} over a span of ${gaps[0].span} (gap-free: ${gaps[0].n === Number(gaps[0].span)})`,
    );
    console.log(`  same run, the same create over 10 organisations (no shared lock): ${spread(spreadRuns)}`);
    console.log(`  same run, GET /health: ${spread(healthRuns)}`);
    console.log(`  same run, POST /hours on 20 assets: ${spread(writeRuns.hours)}`);
    await removeBenchWrites(pool, org, seqBefore[0].n, writesStarted, spreadKeys.length);
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all([pool.end(), http.close()]);
}

function require_rss(pid: number): string {
  // RSS in KiB of the API process, from /proc (Linux).
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return /VmRSS:\s+(\d+)/.exec(status)?.[1] ?? '0';
}
