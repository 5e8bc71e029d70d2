// Benchmark: the hot path of the production entry (`node dist/main.js`, PostgreSQL, one organisation with 5,000
// assets, 200 API keys of 10 organisations in rotation) against baselines in plain Node that use the project's own
// fastify and pg (bench/lib/hotpath/baselines.ts).
// Usage: npm run bench (builds first), or npm run build && npm run bench:hotpath. Each API measurement alternates
// with its baseline, round after round; the ratio is taken within each round and the median of those ratios
// reported (the machine is shared, so absolute figures are noisy; a noisy moment hits both sides of a round).
// Requests rotate through the keys as an integration server holding many tenants' keys sends them (every request
// the next key; the list through the keys of the organisation with the assets); each baseline gets the same
// rotating Authorization header, so both sides pay for it alike:
//   GET /api/v1/me                vs bare Fastify {ok:true}                      (50 connections)
//   GET /api/v1/assets?limit=50   vs Fastify + pg, same query, same shape        (50 connections)
//   POST /api/v1/hours            vs the same two statements on Fastify + pg     (10 connections)
//   CPU per request of each server (user + system time of the process over the run, from /proc)
//   peak RSS of the API during the /me and list runs (VmRSS sampled every 100 ms, and VmHWM)
//   start-up: spawn to the first healthy answer, API vs bare Fastify, alternating
//   the top self-time entries of a CPU profile (--cpu-prof) of the API under the list + /me load
//   dispatch to one receiver: with BENCH_DISPATCH=1, bench/webhook-delivery.ts runs after the rest (its own report)
//   the floor under /me: with BENCH_FLOOR=1, plain Fastify sending /me's exact answer as a static string, alone and
//     with the API's logger, request ids and empty hooks (FLOOR in the baselines), each vs bare Fastify
// Env: BENCH_DATABASE_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_ROUNDS (4),
// BENCH_DURATION seconds per run (8), BENCH_START_ROUNDS (5), BENCH_PROFILE seconds (6, 0 = none), BENCH_PORT
// (first of six ports, default 4380), BENCH_ASSETS (5000), BENCH_API_ROOT (another checkout whose dist/ is the
// API, for a before/after table), BENCH_NODE_OPTIONS (extra node flags for the API, e.g. --max-semi-space-size=8),
// BENCH_KEYS (200) over BENCH_KEY_ORGS (10) organisations, BENCH_PRE_AUTH_LIMIT (the API's
// PRE_AUTH_RATE_LIMIT_PER_MINUTE; unset: its default).
// Linux only (reads /proc). Loopback only.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { GUARDED_RECORD_LOG_SQL } from '../src/modules/hours/hours.operations.ts';
import { ASSET_WITH_PROJECT } from '../src/modules/hours/hours.repository.ts';
import { ADMIN_URL, flag, num } from './lib/env.ts';
import { BARE, FLOOR, PG_HOURS, PG_LIST } from './lib/hotpath/baselines.ts';
import { alternate, summarise, type Pair } from './lib/load.ts';
import { cpuMs, statusMb } from './lib/proc.ts';
import { topOfProfile } from './lib/profile.ts';
import { writeResults } from './lib/results.ts';
import { createKeyRing, seedFleet } from './lib/seed.ts';
import { apiEnv, healthUrl, ready, requireBuild, ROOT, spawnInline, spawnServer, stop, stopAll } from './lib/server.ts';
import type { Server } from './lib/server.ts';
import { int, median } from './lib/stats.ts';

const ROUNDS = num('BENCH_ROUNDS', 4);
const DURATION = num('BENCH_DURATION', 8);
const START_ROUNDS = num('BENCH_START_ROUNDS', 5);
const PROFILE_SEC = num('BENCH_PROFILE', 6);
const PORT = num('BENCH_PORT', 4380);
const ASSETS = num('BENCH_ASSETS', 5_000);
const KEYS = num('BENCH_KEYS', 200);
const KEY_ORGS = num('BENCH_KEY_ORGS', 10);
const PRE_AUTH = process.env.BENCH_PRE_AUTH_LIMIT;
const API_FLAGS = (process.env.BENCH_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
const [API_PORT, BARE_PORT, LIST_PORT, HOURS_PORT, FLOOR_PORT] = [PORT, PORT + 1, PORT + 2, PORT + 3, PORT + 4];
const WITH_FLOOR = flag('BENCH_FLOOR');
// Another checkout's build as the API (e.g. the code before a change, for a before/after table).
const API_ROOT = process.env.BENCH_API_ROOT ?? ROOT;
const local = (port: number, p: string) => `http://127.0.0.1:${port}${p}`;

requireBuild(API_ROOT);

const startApi = (url: string, flags: string[] = []) =>
  spawnServer(
    [...API_FLAGS, ...flags, 'dist/main.js'],
    apiEnv(API_PORT, {
      DATABASE_URL: url,
      ...(PRE_AUTH === undefined ? {} : { PRE_AUTH_RATE_LIMIT_PER_MINUTE: PRE_AUTH }),
    }),
    { cwd: API_ROOT },
  );
const pairOpts = { rounds: ROUNDS, duration: DURATION };

/**
 * autocannon options sending `path` with the next key of `keys` on every request (autocannon calls setupRequest
 * for each request it sends), extra headers beside it.
 */
function rotating(url: string, path: string, keys: readonly string[], connections = 50): autocannon.Options {
  let turn = 0;
  const headers = keys.map((k) => ({ authorization: `Bearer ${k}` }));
  return {
    url,
    connections,
    requests: [{ method: 'GET', path, setupRequest: (r) => ({ ...r, headers: headers[turn++ % headers.length] }) }],
  };
}

/** Start-up to the first healthy answer, API and bare Fastify alternating; also the CPU the API used until then. */
async function startup(url: string) {
  const api: number[] = [];
  const apiCpu: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < START_ROUNDS; i++) {
    let t0 = performance.now();
    const s = startApi(url);
    api.push(await ready(s, healthUrl(API_PORT), t0));
    apiCpu.push(cpuMs(s.pid));
    await stop(s, true);
    t0 = performance.now();
    const b = spawnInline(BARE, [String(BARE_PORT)]);
    bare.push(await ready(b, local(BARE_PORT, '/ok'), t0));
    await stop(b);
    console.error(
      `start-up round ${i + 1}: API ${api[i].toFixed(0)} ms (CPU ${apiCpu[i]} ms), bare Fastify ${bare[i].toFixed(0)} ms`,
    );
  }
  return { apiMs: median(api), apiCpuMs: median(apiCpu), bareMs: median(bare) };
}

/** /me's answer as the API sends it (headers and body), then the floor servers sending it, each paired with bare. */
async function floorPairs(auth: Record<string, string>, barePid: number): Promise<Pair[]> {
  const res = await fetch(local(API_PORT, '/api/v1/me'), { headers: auth });
  const transport = new Set(['date', 'connection', 'keep-alive', 'content-length', 'content-type']);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => !transport.has(name)));
  const answer = JSON.stringify({ headers, body: await res.text() });
  const pairs: Pair[] = [];
  for (const [i, mode] of (['answer', 'framework'] as const).entries()) {
    const port = FLOOR_PORT + i;
    const floor = spawnInline(FLOOR, [String(port), mode, answer]);
    try {
      await ready(floor, local(port, '/me'));
      const name =
        mode === 'answer'
          ? "Floor: plain Fastify sending /me's answer"
          : '+ the API logger, request ids and empty hooks';
      pairs.push(
        await alternate(
          name,
          [floor.pid, { connections: 50, url: local(port, '/me') }],
          [barePid, { connections: 50, url: local(BARE_PORT, '/ok') }],
          pairOpts,
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
    await ready(s, healthUrl(API_PORT));
    await autocannon({ ...listAndMe, duration: 2 });
    await autocannon({ ...listAndMe, duration: PROFILE_SEC });
    await stop(s, true);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    return file ? topOfProfile(JSON.parse(readFileSync(path.join(dir, file), 'utf8')), 20) : ['(no profile written)'];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * POST /hours load: requests take the metered assets in turn and readings rise by a thousandth per request, so
 * every reading is plausible and above its asset's last: all are 201s. An asset comes round again only after
 * thousands of requests, long after its previous one was answered (10 in flight at most). Not per connection:
 * autocannon resets a connection's context after each request (its list of one), so a connection cannot own
 * assets, and two in-flight readings of one asset could commit in the wrong order (422, lower than the last).
 */
function hoursLoad() {
  let reading = 1_000;
  let turn = 0;
  const metered = Array.from({ length: ASSETS }, (_, i) => i).filter((i) => i % 3 !== 2);
  return (url: string, headers: Record<string, string>): autocannon.Options => ({
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
}

const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_hot');
const servers: Server[] = [];
try {
  const target = { databaseUrl: scratch.url, dataDir: 'unused' };
  const tenant = await seedFleet(target, ASSETS);
  const { orgId, userId, key } = tenant;
  const keys = await createKeyRing(target, tenant, KEYS, KEY_ORGS);
  console.error(`${keys.all.length} keys over ${KEY_ORGS} organisations (${keys.ofTenant.length} with the assets)`);
  const auth = { authorization: `Bearer ${key}` };
  const start = await startup(scratch.url);

  const api = startApi(scratch.url);
  servers.push(api);
  await ready(api, healthUrl(API_PORT));
  const bare = spawnInline(BARE, [String(BARE_PORT)]);
  const list = spawnInline(PG_LIST, [String(LIST_PORT), scratch.url, orgId]);
  const assetSql = `${ASSET_WITH_PROJECT} FROM assets WHERE id = $1 AND "orgId" = $2`;
  const hours = spawnInline(PG_HOURS, [
    String(HOURS_PORT),
    scratch.url,
    orgId,
    userId,
    JSON.stringify([assetSql, GUARDED_RECORD_LOG_SQL]),
  ]);
  servers.push(bare, list, hours);
  await ready(bare, local(BARE_PORT, '/ok'));
  await ready(list, local(LIST_PORT, '/assets'));

  const me = await alternate(
    `GET /me (${keys.all.length} keys)`,
    [api.pid, rotating(local(API_PORT, ''), '/api/v1/me', keys.all)],
    [bare.pid, rotating(local(BARE_PORT, ''), '/ok', keys.all)],
    { ...pairOpts, rssEveryMs: 100 },
  );
  const floors = WITH_FLOOR ? await floorPairs(auth, bare.pid) : [];
  const assets = await alternate(
    `GET /assets?limit=50 (${keys.ofTenant.length} keys)`,
    [api.pid, rotating(local(API_PORT, ''), '/api/v1/assets?limit=50', keys.ofTenant)],
    [list.pid, rotating(local(LIST_PORT, ''), '/assets', keys.ofTenant)],
    { ...pairOpts, rssEveryMs: 100 },
  );
  const peakRss = Math.max(...[...me.api, ...assets.api].flatMap((l) => l.rssMb));
  const hwm = statusMb(api.pid, 'VmHWM');
  const hoursOpts = hoursLoad();
  const post = await alternate(
    'POST /hours',
    [api.pid, hoursOpts(local(API_PORT, '/api/v1/hours'), auth)],
    [hours.pid, hoursOpts(local(HOURS_PORT, '/hours'), {})],
    pairOpts,
  );
  await stop(api, true);
  servers.splice(0, 1);

  const prof =
    PROFILE_SEC > 0
      ? await profile(scratch.url, {
          ...rotating(local(API_PORT, ''), '/api/v1/me', keys.all),
          requests: [
            rotating(local(API_PORT, ''), '/api/v1/assets?limit=50', keys.ofTenant).requests![0],
            rotating(local(API_PORT, ''), '/api/v1/me', keys.all).requests![0],
          ],
        })
      : [];

  const pairs = [me, ...floors, assets, post].map(summarise);
  const failures = { api: 0, baselines: 0 };
  for (const p of pairs) {
    failures.api += p.api.non2xx;
    failures.baselines += p.baseline.non2xx;
  }
  console.log(
    `\nPostgreSQL, ${int(ASSETS)} assets; medians of ${ROUNDS} alternating ${DURATION} s rounds (ratio per round, then the median);`,
  );
  console.log(`node ${process.version}${API_FLAGS.length ? `; API flags ${API_FLAGS.join(' ')}` : ''}\n`);
  console.log('| Measure | API | Baseline | Ratio (req/s) | Ratio (CPU/req) |');
  console.log('|---|---|---|---|---|');
  for (const p of pairs) {
    const side = (x: typeof p.api) => `${int(x.rps)} req/s, ${x.cpuPerReqMs.toFixed(3)} ms CPU/req`;
    console.log(
      `| ${p.name} | ${side(p.api)} | ${side(p.baseline)} | **${p.ratio.toFixed(2)}x** (rounds ${p.roundRatios.map((r) => r.toFixed(2)).join(', ')}) | ${p.cpuRatio.toFixed(2)}x |`,
    );
  }
  console.log(
    `| Peak RSS of the API during the /me and list runs | ${peakRss.toFixed(0)} MB (VmHWM ${hwm.toFixed(0)} MB) | | | |`,
  );
  console.log(
    `| Start-up to first healthy answer (median of ${START_ROUNDS}) | ${int(start.apiMs)} ms (CPU ${int(start.apiCpuMs)} ms) | bare Fastify: ${int(start.bareMs)} ms | | |`,
  );
  console.log(`\nnon-2xx or errors: API ${failures.api}, baselines ${failures.baselines}`);
  if (prof.length) {
    console.log(`\nCPU profile of the API, ${PROFILE_SEC} s of list + /me (self time, top entries):\n`);
    for (const line of prof) console.log(line);
  }
  writeResults('hotpath', {
    assets: ASSETS,
    keys: keys.all.length,
    keyOrgs: KEY_ORGS,
    preAuthLimit: PRE_AUTH ?? 'default',
    rounds: ROUNDS,
    durationSec: DURATION,
    apiFlags: API_FLAGS,
    pairs,
    peakRssMb: Math.round(peakRss),
    vmHwmMb: Math.round(hwm),
    startup: { rounds: START_ROUNDS, ...start },
    failures,
    profile: prof,
  });
} finally {
  await stopAll(servers);
  await scratch.drop();
}

if (flag('BENCH_DISPATCH')) {
  console.log('\nDispatch (bench/webhook-delivery.ts):\n');
  spawnSync(process.execPath, ['--import', 'tsx', 'bench/webhook-delivery.ts'], { cwd: ROOT, stdio: 'inherit' });
}
