// Benchmark: the server's footprint and start-up, measured from outside the process the way an operator sees
// it. For each database (PostgreSQL, embedded PGlite) and each way of running the server (the built JavaScript
// `node dist/main.js` against the old `node --import tsx src/main.ts` as the baseline), in alternating rounds:
//   start-up  time from spawning the process to the first 200 from GET /api/v1/health (migrations already applied),
//             and the CPU time (user + system, all threads) the process used until then: on a busy shared
//             machine the wall time mostly measures waiting for a core, the CPU time what start-up costs
//   idle      RSS (/proc/<pid>/status VmRSS) a few seconds after start-up, before any request
//   load      median RSS sampled every 250 ms under the bench's mixed load (GET /api/v1/assets?limit=50 and
//             GET /api/v1/me alternating, 50 connections, 1,000 assets), and the requests/s it served
//   peak      VmHWM (the kernel's high-water mark of RSS) at the end of the run
// Each run ends with SIGTERM and must exit 0. Medians of the rounds are printed.
// Usage: npm run build && npm run bench:runtime. Env: BENCH_DATABASE_URL (admin URL of the PostgreSQL server,
// default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_DATABASES (postgresql,pglite), BENCH_ROUNDS (3),
// BENCH_DURATION seconds of load (10), BENCH_IDLE_MS (3000), BENCH_VARIANTS (tsx,js), and BENCH_EXTRA to add
// variants: "label=node args;label2=node args" (e.g. "js-heap96=--max-old-space-size=96 dist/main.js").
// Linux only (reads /proc). Loopback only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, num, sleep, text } from './lib/env.ts';
import { measureLoad } from './lib/load.ts';
import { cpuMs, statusMb } from './lib/proc.ts';
import { writeResults } from './lib/results.ts';
import { seedFleet } from './lib/seed.ts';
import { API_ENTRY, requireBuild, startApi, stop } from './lib/server.ts';
import { median, round } from './lib/stats.ts';

const DATABASES = text('BENCH_DATABASES', 'postgresql,pglite').split(',');
const ROUNDS = num('BENCH_ROUNDS', 3);
const DURATION = num('BENCH_DURATION', 10);
const IDLE_MS = num('BENCH_IDLE_MS', 3000);
const PORT = 4390;

const BUILT_IN: Record<string, readonly string[]> = API_ENTRY;
const variants: [string, readonly string[]][] = text('BENCH_VARIANTS', 'tsx,js')
  .split(',')
  .filter(Boolean)
  .map((name) => {
    if (!BUILT_IN[name]) throw new Error(`unknown variant ${name} (built in: ${Object.keys(BUILT_IN).join(', ')})`);
    return [name, BUILT_IN[name]];
  });
for (const spec of (process.env.BENCH_EXTRA ?? '').split(';').filter(Boolean)) {
  const at = spec.indexOf('=');
  const [label, args] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, spec];
  variants.push([label, args.trim().split(/\s+/)]);
}
if (variants.some(([, args]) => args.includes('dist/main.js'))) requireBuild();

interface Sample {
  startMs: number;
  startCpuMs: number;
  idleMb: number;
  loadMb: number;
  peakMb: number;
  rps: number;
}

async function run(args: readonly string[], env: Record<string, string>, key: string): Promise<Sample> {
  const { server, startMs } = await startApi({ port: PORT, args, env });
  try {
    const startCpuMs = cpuMs(server.pid);
    await sleep(IDLE_MS);
    const idleMb = statusMb(server.pid, 'VmRSS');
    const load = await measureLoad(
      server.pid,
      {
        url: `http://127.0.0.1:${PORT}`,
        connections: 50,
        headers: { authorization: `Bearer ${key}` },
        requests: [{ path: '/api/v1/assets?limit=50' }, { path: '/api/v1/me' }],
      },
      DURATION,
      250,
    );
    if (load.non2xx) throw new Error(`${load.non2xx} non-2xx or errors under load`);
    const peakMb = statusMb(server.pid, 'VmHWM');
    await stop(server, true);
    // The first second of samples is the load ramping up.
    return { startMs, startCpuMs, idleMb, loadMb: median(load.rssMb.slice(4)), peakMb, rps: load.rps };
  } finally {
    await stop(server);
  }
}

const rows: string[] = [];
const results: Record<string, unknown>[] = [];
for (const database of DATABASES) {
  let scratch: ScratchDatabase | undefined;
  let dataDir: string | undefined;
  try {
    let env: Record<string, string>;
    let key: string;
    if (database === 'postgresql') {
      scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_rt');
      key = (await seedFleet({ databaseUrl: scratch.url, dataDir: 'unused' }, 1000)).key;
      env = { DATABASE_URL: scratch.url };
    } else {
      dataDir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-rt-'));
      key = (await seedFleet({ dataDir }, 1000)).key;
      env = { DATA_DIR: dataDir };
    }
    const samples = new Map<string, Sample[]>(variants.map(([name]) => [name, []]));
    // Alternating rounds: a noisy moment on the shared machine hits every variant, not one.
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, args] of variants) {
        const s = await run(args, env, key);
        samples.get(name)!.push(s);
        console.error(
          `${database} ${name} round ${r + 1}: start ${s.startMs.toFixed(0)} ms (CPU ${s.startCpuMs} ms), idle ${s.idleMb.toFixed(0)} MB, load ${s.loadMb.toFixed(0)} MB, peak ${s.peakMb.toFixed(0)} MB, ${s.rps.toFixed(0)} req/s`,
        );
      }
    }
    for (const [name, list] of samples) {
      const m = (f: keyof Sample) => round(median(list.map((s) => s[f])), 0);
      const row = {
        database,
        variant: name,
        startMs: m('startMs'),
        startCpuMs: m('startCpuMs'),
        idleRssMb: m('idleMb'),
        loadRssMb: m('loadMb'),
        peakRssMb: m('peakMb'),
        rps: m('rps'),
      };
      results.push(row);
      rows.push(
        `| ${database} | ${name} | ${row.startMs} ms | ${row.startCpuMs} ms | ${row.idleRssMb} MB | ${row.loadRssMb} MB | ${row.peakRssMb} MB | ${row.rps} |`,
      );
    }
  } finally {
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
// Start-up and throughput are CPU-bound: on a shared machine, read them next to the load average (in the JSON).
console.log(
  `\nmedians of ${ROUNDS} alternating rounds; ${DURATION}s of mixed load (assets list + /me), 50 connections, 1,000 assets\n`,
);
console.log(
  '| Database | Run | Start-up to healthy | CPU until healthy | Idle RSS | RSS under load | Peak RSS | req/s |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
writeResults('runtime', { rounds: ROUNDS, durationSec: DURATION, assets: 1000, variants: results });
