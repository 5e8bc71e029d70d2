// Benchmark: the hot path of the production entry (`node dist/main.js`, PostgreSQL, one organisation with 5,000
// assets) against baselines in plain Node that use the project's own fastify and pg (bench/hotpath-baselines.ts).
// Usage: npm run build && npm run bench:hotpath. Each API measurement alternates with its baseline, round after
// round; the ratio is taken within each round and the median of those ratios reported (the machine is shared, so
// absolute figures are noisy; a noisy moment hits both sides of a round). Reports:
//   GET /api/v1/me                vs bare Fastify {ok:true}                      (50 connections)
//   GET /api/v1/assets?limit=50   vs Fastify + pg, same query, same shape        (50 connections)
//   POST /api/v1/hours            vs the same two statements on Fastify + pg     (10 connections)
//   CPU per request of each server (user + system time of the process over the run, from /proc)
//   peak RSS of the API during the /me and list runs (VmRSS sampled every 100 ms, and VmHWM)
//   start-up: spawn to the first healthy answer, API vs bare Fastify, alternating
//   the top self-time entries of a CPU profile (--cpu-prof) of the API under the list + /me load
//   dispatch to one receiver: with BENCH_DISPATCH=1, bench/webhook-delivery.ts runs after the rest (its own report)
//   the floor under /me: with BENCH_FLOOR=1, plain Fastify sending /me's exact answer as a static string, alone and
//     with the API's logger, request ids and empty hooks (bench/hotpath-baselines.ts FLOOR), each vs bare Fastify
// Env: BENCH_DATABASE_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_ROUNDS (4),
// BENCH_DURATION seconds per run (8), BENCH_START_ROUNDS (5), BENCH_PROFILE seconds (6, 0 = none), BENCH_PORT
// (first of six ports, default 4380), BENCH_API_ROOT (another checkout whose dist/ is the API, for a before/after
// table), BENCH_NODE_OPTIONS (extra node flags for the API, e.g. --max-semi-space-size=8).
// Linux only (reads /proc). Loopback only.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { GUARDED_RECORD_LOG_SQL } from '../src/modules/hours/hours.operations.ts';
import { ASSET_WITH_PROJECT } from '../src/modules/hours/hours.repository.ts';
import { BARE, FLOOR, PG_HOURS, PG_LIST } from './hotpath-baselines.ts';
import { cpuMs, median, ready, spawnServer, statusField, stop, topOfProfile, type Server } from './hotpath-lib.ts';
import { BENCH_SECRETS_KEYS } from './bench-keys.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const START_ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 5);
const PROFILE_SEC = Number(process.env.BENCH_PROFILE ?? 6);
const PORT = Number(process.env.BENCH_PORT ?? 4380);
const API_FLAGS = (process.env.BENCH_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
const ASSETS = 5_000;
const [API_PORT, BARE_PORT, LIST_PORT, HOURS_PORT, FLOOR_PORT] = [PORT, PORT + 1, PORT + 2, PORT + 3, PORT + 4];
const WITH_FLOOR = process.env.BENCH_FLOOR === '1';

if (!existsSync(path.join(process.env.BENCH_API_ROOT ?? ROOT, 'dist/main.js')))
  throw new Error('dist/main.js is missing: run `npm run build` first');

async function seed(url: string) {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  await migrate(db.sql);
  const admin = createOrgAdmin(db);
  const org = await admin.createOrg('Bench Fleet', 'bench');
  const user = await admin.createUser('bench', 'bench@example.com', 'Bench');
  const key = await admin.createKey({
    orgSlug: 'bench',
    userEmail: 'bench@example.com',
    label: 'bench',
    rateLimit: '100000000',
  });
  const classes = ['ON_ROAD', 'OFF_ROAD', 'TRAILER'] as const;
  await db.prisma.asset.createMany({
    data: Array.from({ length: ASSETS }, (_, i) => ({
      id: `bench-asset-${i}`,
      orgId: org.id,
      nickname: `Unit ${i}`,
      assetClass: classes[i % 3],
      meterType: (['ODOMETER', 'HOURS', 'NONE'] as const)[i % 3],
      meterUnit: ['mi', 'hrs', 'none'][i % 3],
      vin: i % 2 ? `VIN${i}` : null,
      createdAt: new Date(Date.now() - i * 1000),
    })),
  });
  await db.sql.exec('ANALYZE');
  await db.close();
  return { orgId: org.id, userId: user.id, key: key.key };
}

const apiEnv = (url: string) => ({
  DATABASE_URL: url,
  SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
  PORT: String(API_PORT),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_MINUTE: '100000000',
});
// Another checkout's build as the API (e.g. the code before a change, for a before/after table).
const API_ROOT = process.env.BENCH_API_ROOT ?? ROOT;
const startApi = (url: string, flags: string[] = []) =>
  spawnServer([...API_FLAGS, ...flags, 'dist/main.js'], apiEnv(url), API_ROOT);
const startInline = (code: string, args: string[]) => spawnServer(['--input-type=module', '-e', code, ...args]);

interface Load {
  rps: number;
  p50: number;
  cpuPerReqMs: number;
  non2xx: number;
  peakRss?: number;
}

async function load(pid: number, opts: autocannon.Options, duration: number, sampleRss = false): Promise<Load> {
  const cpu0 = cpuMs(pid);
  let peakRss = 0;
  const timer = sampleRss ? setInterval(() => (peakRss = Math.max(peakRss, statusField(pid, 'VmRSS'))), 100) : null;
  const r = await autocannon({ ...opts, duration });
  if (timer) clearInterval(timer);
  const cpu = cpuMs(pid) - cpu0;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    cpuPerReqMs: cpu / Math.max(1, r.requests.total),
    non2xx: r.non2xx + r.errors,
    peakRss: sampleRss ? peakRss : undefined,
  };
}

interface Pair {
  name: string;
  api: Load[];
  base: Load[];
}

async function pair(
  name: string,
  api: [number, autocannon.Options],
  base: [number, autocannon.Options],
  sampleRss = false,
): Promise<Pair> {
  await load(api[0], api[1], 2);
  await load(base[0], base[1], 2);
  const p: Pair = { name, api: [], base: [] };
  for (let i = 0; i < ROUNDS; i++) {
    p.api.push(await load(api[0], api[1], DURATION, sampleRss));
    p.base.push(await load(base[0], base[1], DURATION));
    const [a, b] = [p.api[i], p.base[i]];
    console.error(
      `${name} round ${i + 1}: ${a.rps.toFixed(0)} vs ${b.rps.toFixed(0)} req/s (${(a.rps / b.rps).toFixed(2)}x), CPU ${a.cpuPerReqMs.toFixed(3)} vs ${b.cpuPerReqMs.toFixed(3)} ms/req${a.peakRss ? `, RSS peak ${a.peakRss.toFixed(0)} MB` : ''}${a.non2xx + b.non2xx ? `, non-2xx/errors ${a.non2xx} vs ${b.non2xx}` : ''}`,
    );
  }
  return p;
}

/** Start-up to the first healthy answer, API and bare Fastify alternating; also the CPU the API used until then. */
async function startup(url: string) {
  const api: number[] = [];
  const apiCpu: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < START_ROUNDS; i++) {
    let t0 = performance.now();
    const s = startApi(url);
    api.push(await ready(s, `http://127.0.0.1:${API_PORT}/api/v1/health`, t0));
    apiCpu.push(cpuMs(s.child.pid!));
    await stop(s, true);
    t0 = performance.now();
    const b = startInline(BARE, [String(BARE_PORT)]);
    bare.push(await ready(b, `http://127.0.0.1:${BARE_PORT}/ok`, t0));
    await stop(b);
    console.error(
      `start-up round ${i + 1}: API ${api[i].toFixed(0)} ms (CPU ${apiCpu[i]} ms), bare Fastify ${bare[i].toFixed(0)} ms`,
    );
  }
  return { api: median(api), apiCpu: median(apiCpu), bare: median(bare) };
}

/** /me's answer as the API sends it (headers and body), then the floor servers sending it, each paired with bare. */
async function floorPairs(auth: Record<string, string>, barePid: number): Promise<Pair[]> {
  const res = await fetch(`http://127.0.0.1:${API_PORT}/api/v1/me`, { headers: auth });
  const transport = new Set(['date', 'connection', 'keep-alive', 'content-length', 'content-type']);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => !transport.has(name)));
  const answer = JSON.stringify({ headers, body: await res.text() });
  const pairs: Pair[] = [];
  for (const [i, mode] of (['answer', 'framework'] as const).entries()) {
    const port = FLOOR_PORT + i;
    const floor = startInline(FLOOR, [String(port), mode, answer]);
    try {
      await ready(floor, `http://127.0.0.1:${port}/me`, performance.now());
      const name =
        mode === 'answer'
          ? "Floor: plain Fastify sending /me's answer"
          : '+ the API logger, request ids and empty hooks';
      pairs.push(
        await pair(
          name,
          [floor.child.pid!, { connections: 50, url: `http://127.0.0.1:${port}/me` }],
          [barePid, { connections: 50, url: `http://127.0.0.1:${BARE_PORT}/ok` }],
        ),
      );
    } finally {
      await stop(floor);
    }
  }
  return pairs;
}

async function profile(url: string, listAndMe: autocannon.Options) {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-hotpath-prof-'));
  try {
    const s = startApi(url, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    await ready(s, `http://127.0.0.1:${API_PORT}/api/v1/health`, performance.now());
    await autocannon({ ...listAndMe, duration: 2 });
    await autocannon({ ...listAndMe, duration: PROFILE_SEC });
    await stop(s, true);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    return file ? topOfProfile(JSON.parse(readFileSync(path.join(dir, file), 'utf8')), 20) : ['(no profile written)'];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_hot');
const servers: Server[] = [];
const loadBefore = loadavg()[0];
try {
  const { orgId, userId, key } = await seed(scratch.url);
  const auth = { authorization: `Bearer ${key}` };
  const start = await startup(scratch.url);

  const api = startApi(scratch.url);
  servers.push(api);
  await ready(api, `http://127.0.0.1:${API_PORT}/api/v1/health`, performance.now());
  const bare = startInline(BARE, [String(BARE_PORT)]);
  const list = startInline(PG_LIST, [String(LIST_PORT), scratch.url, orgId]);
  const hours = startInline(PG_HOURS, [
    String(HOURS_PORT),
    scratch.url,
    orgId,
    userId,
    JSON.stringify([`${ASSET_WITH_PROJECT} FROM assets WHERE id = $1 AND "orgId" = $2`, GUARDED_RECORD_LOG_SQL]),
  ]);
  servers.push(bare, list, hours);
  await ready(bare, `http://127.0.0.1:${BARE_PORT}/ok`, performance.now());
  await ready(list, `http://127.0.0.1:${LIST_PORT}/assets`, performance.now());

  const pid = (s: Server) => s.child.pid!;
  const c50 = { connections: 50 };
  const me = await pair(
    'GET /me',
    [pid(api), { ...c50, url: `http://127.0.0.1:${API_PORT}/api/v1/me`, headers: auth }],
    [pid(bare), { ...c50, url: `http://127.0.0.1:${BARE_PORT}/ok` }],
    true,
  );
  const floors = WITH_FLOOR ? await floorPairs(auth, pid(bare)) : [];
  const assets = await pair(
    'GET /assets?limit=50',
    [pid(api), { ...c50, url: `http://127.0.0.1:${API_PORT}/api/v1/assets?limit=50`, headers: auth }],
    [pid(list), { ...c50, url: `http://127.0.0.1:${LIST_PORT}/assets` }],
    true,
  );
  const peakRss = Math.max(...[...me.api, ...assets.api].map((l) => l.peakRss ?? 0));
  const hwm = statusField(pid(api), 'VmHWM');
  // Requests take the metered assets in turn and readings rise by a thousandth per request, so every reading is
  // plausible and above its asset's last: all are 201s. An asset comes round again only after ~3,300 requests, long
  // after its previous one was answered (10 in flight at most, a run's last ones included). Not per connection:
  // autocannon resets a connection's context after each request (its list of one), so a connection cannot own
  // assets, and two in-flight readings of one asset could commit in the wrong order (422, lower than the last).
  let reading = 1_000;
  let turn = 0;
  const metered = Array.from({ length: ASSETS }, (_, i) => i).filter((i) => i % 3 !== 2);
  const hoursOpts = (url: string, headers: Record<string, string>): autocannon.Options => ({
    url,
    connections: 10,
    requests: [
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        setupRequest: (r) => {
          reading += 0.001;
          const assetId = `bench-asset-${metered[turn++ % metered.length]}`;
          return { ...r, body: JSON.stringify({ assetId, hoursReading: Math.round(reading * 1000) / 1000 }) };
        },
      },
    ],
  });
  const post = await pair(
    'POST /hours',
    [pid(api), hoursOpts(`http://127.0.0.1:${API_PORT}/api/v1/hours`, auth)],
    [pid(hours), hoursOpts(`http://127.0.0.1:${HOURS_PORT}/hours`, {})],
  );
  await stop(api, true);
  servers.splice(0, 1);

  const prof =
    PROFILE_SEC > 0
      ? await profile(scratch.url, {
          url: `http://127.0.0.1:${API_PORT}`,
          connections: 50,
          headers: auth,
          requests: [{ path: '/api/v1/assets?limit=50' }, { path: '/api/v1/me' }],
        })
      : [];

  const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  const row = (p: Pair) => {
    const ratios = p.api.map((a, i) => a.rps / p.base[i].rps);
    const a = (f: (l: Load) => number) => median(p.api.map(f));
    const b = (f: (l: Load) => number) => median(p.base.map(f));
    return `| ${p.name} | ${fmt(a((l) => l.rps))} req/s, ${a((l) => l.cpuPerReqMs).toFixed(3)} ms CPU/req | ${fmt(b((l) => l.rps))} req/s, ${b((l) => l.cpuPerReqMs).toFixed(3)} ms CPU/req | **${median(ratios).toFixed(2)}x** (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}) | ${(b((l) => l.cpuPerReqMs) / a((l) => l.cpuPerReqMs)).toFixed(2)}x |`;
  };
  const failures = (side: 'api' | 'base') =>
    [me, ...floors, assets, post].flatMap((p) => p[side]).reduce((n, l) => n + l.non2xx, 0);
  console.log(
    `\nPostgreSQL, ${fmt(ASSETS)} assets; medians of ${ROUNDS} alternating ${DURATION} s rounds (ratio per round, then the median);`,
  );
  console.log(
    `load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; node ${process.version}${API_FLAGS.length ? `; API flags ${API_FLAGS.join(' ')}` : ''}\n`,
  );
  console.log('| Measure | API | Baseline | Ratio (req/s) | Ratio (CPU/req) |');
  console.log('|---|---|---|---|---|');
  console.log(row(me));
  for (const floor of floors) console.log(row(floor));
  console.log(row(assets));
  console.log(row(post));
  console.log(
    `| Peak RSS of the API during the /me and list runs | ${peakRss.toFixed(0)} MB (VmHWM ${hwm.toFixed(0)} MB) | | | |`,
  );
  console.log(
    `| Start-up to first healthy answer (median of ${START_ROUNDS}) | ${fmt(start.api)} ms (CPU ${fmt(start.apiCpu)} ms) | bare Fastify: ${fmt(start.bare)} ms | | |`,
  );
  console.log(`\nnon-2xx or errors: API ${failures('api')}, baselines ${failures('base')}`);
  if (prof.length) {
    console.log(`\nCPU profile of the API, ${PROFILE_SEC} s of list + /me (self time, top entries):\n`);
    for (const line of prof) console.log(line);
  }
} finally {
  for (const s of servers) await stop(s);
  await scratch.drop();
}

if (process.env.BENCH_DISPATCH === '1') {
  console.log('\nDispatch (bench/webhook-delivery.ts):\n');
  spawnSync(process.execPath, ['--import', 'tsx', 'bench/webhook-delivery.ts'], { cwd: ROOT, stdio: 'inherit' });
}
