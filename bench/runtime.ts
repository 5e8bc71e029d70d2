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
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createScratchDatabase, type ScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { BENCH_SECRETS_KEYS } from './bench-keys.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DATABASES = (process.env.BENCH_DATABASES ?? 'postgresql,pglite').split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 3000);
const PORT = 4390;

const BUILT_IN: Record<string, string[]> = {
  tsx: ['--import', 'tsx', 'src/main.ts'],
  js: ['dist/main.js'],
};
const variants: [string, string[]][] = (process.env.BENCH_VARIANTS ?? 'tsx,js')
  .split(',')
  .filter(Boolean)
  .map((name) => {
    if (!BUILT_IN[name]) throw new Error(`unknown variant ${name} (built in: ${Object.keys(BUILT_IN).join(', ')})`);
    return [name, BUILT_IN[name]];
  });
for (const spec of (process.env.BENCH_EXTRA ?? '').split(';').filter(Boolean)) {
  const [label, args] =
    spec.split('=', 2).length === 2
      ? [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)]
      : [spec, spec];
  variants.push([label, args.trim().split(/\s+/)]);
}
if (variants.some(([, args]) => args.includes('dist/main.js')) && !existsSync(path.join(ROOT, 'dist/main.js'))) {
  throw new Error('dist/main.js is missing: run `npm run build` first');
}

interface Sample {
  startMs: number;
  startCpuMs: number;
  idleMb: number;
  loadMb: number;
  peakMb: number;
  rps: number;
}

const kb = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(field));
  return Number(line?.split(/\s+/)[1] ?? NaN);
};
const mb = (k: number) => k / 1024;
/** utime + stime of the whole process, in ms (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function seed(env: { databaseUrl?: string; dataDir: string }) {
  const db = await openDatabase(env);
  await migrate(db.sql);
  const admin = createOrgAdmin(db);
  const org = await admin.createOrg('Bench Fleet', 'bench');
  await admin.createUser('bench', 'bench@example.com', 'Bench');
  const key = await admin.createKey({
    orgSlug: 'bench',
    userEmail: 'bench@example.com',
    label: 'bench',
    rateLimit: '100000000',
  });
  const classes = ['ON_ROAD', 'OFF_ROAD', 'TRAILER'] as const;
  await db.prisma.asset.createMany({
    data: Array.from({ length: 1000 }, (_, i) => ({
      orgId: org.id,
      nickname: `Unit ${i}`,
      assetClass: classes[i % 3],
      meterType: (['ODOMETER', 'HOURS', 'NONE'] as const)[i % 3],
      meterUnit: ['mi', 'hrs', 'none'][i % 3],
      createdAt: new Date(Date.now() - i * 1000),
    })),
  });
  await db.close();
  return key.key;
}

async function firstHealthy(child: ChildProcess, t0: number): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before it was healthy`);
    try {
      if ((await fetch(`http://127.0.0.1:${PORT}/api/v1/health`)).ok) return performance.now() - t0;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) throw new Error('server not healthy after 60 s');
    await sleep(10);
  }
}

async function run(args: string[], env: Record<string, string>, key: string): Promise<Sample> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      PORT: String(PORT),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const startMs = await firstHealthy(child, t0);
    const startCpuMs = cpuMs(child.pid!);
    await sleep(IDLE_MS);
    const idleMb = mb(kb(child.pid!, 'VmRSS'));
    const samples: number[] = [];
    const timer = setInterval(() => samples.push(kb(child.pid!, 'VmRSS')), 250);
    const result = await autocannon({
      url: `http://127.0.0.1:${PORT}`,
      connections: 50,
      duration: DURATION,
      headers: { authorization: `Bearer ${key}` },
      requests: [{ path: '/api/v1/assets?limit=50' }, { path: '/api/v1/me' }],
    });
    clearInterval(timer);
    if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors under load`);
    const peakMb = mb(kb(child.pid!, 'VmHWM'));
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`SIGTERM exit code ${code}`);
    return { startMs, startCpuMs, idleMb, loadMb: mb(median(samples.slice(4))), peakMb, rps: result.requests.average };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

const rows: string[] = [];
const loadBefore = loadavg()[0];
for (const database of DATABASES) {
  let scratch: ScratchDatabase | undefined;
  let dataDir: string | undefined;
  try {
    let env: Record<string, string>;
    let key: string;
    if (database === 'postgresql') {
      scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_rt');
      key = await seed({ databaseUrl: scratch.url, dataDir: 'unused' });
      env = { DATABASE_URL: scratch.url, SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS };
    } else {
      dataDir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-rt-'));
      key = await seed({ dataDir });
      env = { DATA_DIR: dataDir };
    }
    const samples = new Map<string, Sample[]>(variants.map(([name]) => [name, []]));
    // Alternating rounds: a noisy moment on the shared machine hits every variant, not one.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, args] of variants) {
        const s = await run(args, env, key);
        samples.get(name)!.push(s);
        console.error(
          `${database} ${name} round ${round + 1}: start ${s.startMs.toFixed(0)} ms (CPU ${s.startCpuMs} ms), idle ${s.idleMb.toFixed(0)} MB, load ${s.loadMb.toFixed(0)} MB, peak ${s.peakMb.toFixed(0)} MB, ${s.rps.toFixed(0)} req/s`,
        );
      }
    }
    for (const [name, list] of samples) {
      const m = (f: keyof Sample) => median(list.map((s) => s[f]));
      rows.push(
        `| ${database} | ${name} | ${m('startMs').toFixed(0)} ms | ${m('startCpuMs').toFixed(0)} ms | ${m('idleMb').toFixed(0)} MB | ${m('loadMb').toFixed(0)} MB | ${m('peakMb').toFixed(0)} MB | ${m('rps').toFixed(0)} |`,
      );
    }
  } finally {
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
// Start-up and throughput are CPU-bound: on a shared machine, read them next to the load average.
console.log(
  `\nmedians of ${ROUNDS} alternating rounds; ${DURATION}s of mixed load (assets list + /me), 50 connections, 1,000 assets;`,
);
console.log(`load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end\n`);
console.log(
  '| Database | Run | Start-up to healthy | CPU until healthy | Idle RSS | RSS under load | Peak RSS | req/s |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
