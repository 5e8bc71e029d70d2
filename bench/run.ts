// Benchmark: GET /api/v1/assets?limit=50 and GET /api/v1/me on PostgreSQL with 1,000 assets, next to two
// baselines in the same kind of process (bare Fastify; Fastify + raw pg running the same list query).
// Usage: npm run bench   (BENCH_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres;
// BENCH_DURATION seconds per run, default 10). Each server runs in its own process; autocannon drives
// 50 connections from this one. Loopback only.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

async function createDatabase(): Promise<string> {
  const name = `fleet_bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(url: string) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
  await admin.end();
}

async function seed(url: string) {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  await migrate(db.sql);
  const admin = createOrgAdmin(db);
  const org = await admin.createOrg('Bench Fleet', 'bench');
  await admin.createUser('bench', 'bench@example.com', 'Bench');
  const key = await admin.createKey({ orgSlug: 'bench', userEmail: 'bench@example.com', label: 'bench', rateLimit: '100000000' });
  const classes = ['ON_ROAD', 'OFF_ROAD', 'TRAILER'] as const;
  await db.prisma.asset.createMany({
    data: Array.from({ length: 1000 }, (_, i) => ({
      orgId: org.id, nickname: `Unit ${i}`, assetClass: classes[i % 3], meterType: (['ODOMETER', 'HOURS', 'NONE'] as const)[i % 3],
      meterUnit: ['mi', 'hrs', 'none'][i % 3], vin: i % 2 ? `VIN${i}` : null, createdAt: new Date(Date.now() - i * 1000),
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

async function load(url: string, headers: Record<string, string> = {}) {
  await autocannon({ url, connections: 50, duration: 2, headers }); // warm-up
  const r = await autocannon({ url, connections: 50, duration: DURATION, headers });
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const url = await createDatabase();
const children: ChildProcess[] = [];
try {
  const { orgId, key } = await seed(url);
  const auth = { authorization: `Bearer ${key}` };
  const api = fork(here('../src/main.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, DATABASE_URL: url, PORT: '4310', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(api);
  await waitForHealth(4310);
  children.push(await start(here('baseline-bare.ts'), ['4311']));
  children.push(await start(here('baseline-pg.ts'), ['4312', url, orgId]));

  const results = {
    'API   GET /api/v1/assets?limit=50': await load('http://127.0.0.1:4310/api/v1/assets?limit=50', auth),
    'base  Fastify + raw pg, same query': await load('http://127.0.0.1:4312/assets'),
    'API   GET /api/v1/me': await load('http://127.0.0.1:4310/api/v1/me', auth),
    'base  bare Fastify {ok:true}': await load('http://127.0.0.1:4311/ok'),
  };
  console.log(`\n${DURATION}s per run, 50 connections, PostgreSQL, 1,000 assets\n`);
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
  await dropDatabase(url);
}
