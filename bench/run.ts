// Benchmark: GET /api/v1/assets?limit=50 and GET /api/v1/me on PostgreSQL with 1,000 assets, next to two
// baselines in the same kind of process (bare Fastify; Fastify + raw pg running the same list query).
// Usage: npm run bench. Env: BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres),
// BENCH_DURATION seconds per run (10), BENCH_ROUNDS (3), BENCH_PIN=1 to pin servers and load generator to
// separate CPUs. Each server runs in its own process; autocannon drives 50 connections from this one. Each
// pair (API and its baseline) is measured in alternating rounds and compared by median, so a noisy moment
// hits both sides. Loopback only.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { BENCH_SECRETS_KEYS } from './bench-keys.ts';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Opt-in: pinning puts the servers on the same core as PostgreSQL, which skews the list comparison.
const PIN = process.env.BENCH_PIN === '1' && spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]).status === 0;
const pinArgs = (pid: number | undefined) => PIN && pid && spawnSync('taskset', ['-p', '-c', '1', String(pid)]);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

async function seed(url: string) {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
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
      vin: i % 2 ? `VIN${i}` : null,
      createdAt: new Date(Date.now() - i * 1000),
    })),
  });
  await db.close();
  return { orgId: org.id, key: key.key };
}

function start(script: string, args: string[], env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = fork(script, args, {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  pinArgs(child.pid);
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function waitForHealth(port: number) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('API did not become healthy');
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
}

async function once(url: string, headers: Record<string, string>, duration: number): Promise<Run> {
  const r = await autocannon({ url, connections: 50, duration, headers });
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const median = (runs: Run[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];

/** Warms both targets, then measures them in alternating rounds; returns the median run of each. */
async function pair(a: [string, Record<string, string>], b: [string, Record<string, string>]): Promise<[Run, Run]> {
  await once(a[0], a[1], 2);
  await once(b[0], b[1], 2);
  const ra: Run[] = [];
  const rb: Run[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    ra.push(await once(a[0], a[1], DURATION));
    rb.push(await once(b[0], b[1], DURATION));
  }
  return [median(ra), median(rb)];
}

const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench');
const url = scratch.url;
const children: ChildProcess[] = [];
try {
  const { orgId, key } = await seed(url);
  const auth = { authorization: `Bearer ${key}` };
  const api = fork(here('../src/main.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      DATABASE_URL: url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      PORT: '4310',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000000',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(api);
  pinArgs(api.pid);
  await waitForHealth(4310);
  children.push(await start(here('baseline-bare.ts'), ['4311']));
  children.push(await start(here('baseline-pg.ts'), ['4312', url, orgId]));

  const [list, listBase] = await pair(
    ['http://127.0.0.1:4310/api/v1/assets?limit=50', auth],
    ['http://127.0.0.1:4312/assets', {}],
  );
  const [me, meBase] = await pair(['http://127.0.0.1:4310/api/v1/me', auth], ['http://127.0.0.1:4311/ok', {}]);
  const results = {
    'API   GET /api/v1/assets?limit=50': list,
    'base  Fastify + raw pg, same query': listBase,
    'API   GET /api/v1/me': me,
    'base  bare Fastify {ok:true}': meBase,
  };
  console.log(
    `\nmedian of ${ROUNDS} alternating ${DURATION}s runs, 50 connections, PostgreSQL, 1,000 assets, CPU pinning ${PIN ? 'on' : 'off'}\n`,
  );
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name.padEnd(38)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms`);
  }
  const v = Object.values(results);
  const listRatio = v[0].rps / v[1].rps;
  const meRatio = v[2].rps / v[3].rps;
  console.log(`\nlist / raw-pg baseline: ${listRatio.toFixed(2)}x (target >= 0.80)`);
  console.log(`/me  / bare Fastify:    ${meRatio.toFixed(2)}x (target >= 0.40)`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  await scratch.drop();
}
