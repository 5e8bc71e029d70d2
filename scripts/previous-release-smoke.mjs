// N-1 test (rolling restarts): the previous release's server (.ci/previous-release) serves a smoke of its main
// calls on a PostgreSQL database migrated by this tree. During a rolling restart both versions run on the new
// schema; a release that removed or replaced something the previous one still queries fails here.
// The previous release is unpacked with `git archive` into a temporary directory; it reuses this tree's
// node_modules when every package of its lockfile is installed here at the same version, else installs the
// difference into a linked copy of it.
// Usage: npm run test:n-1   Env: CI_POSTGRES_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres),
// N1_PORT (3918), N1_KEEP=1 keeps the directory and database. Bounded: gives up after N1_TIMEOUT_MS (180 s).
// N1_DATABASE_URL runs it on an existing database of this tree's schema instead (neither created nor dropped), and
// N1_LOOP=1 repeats the smoke until SIGUSR2 (at most N1_LOOP_MS, 1 h), each pass on names of its own, then prints
// `N-1 loop: {passes, failed, slowestMs, failures}` and exits 1 if any pass failed (bench/partitions.ts runs it so
// during a partition conversion).
import { execFileSync, execSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '..');
const rev = readFileSync(path.join(root, '.ci/previous-release'), 'utf8').trim();
const ADMIN_URL = process.env.CI_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const PORT = Number(process.env.N1_PORT ?? 3918);
const keep = process.env.N1_KEEP === '1';
const deadline = setTimeout(
  () => fail(`gave up after ${process.env.N1_TIMEOUT_MS ?? 180_000} ms`),
  Number(process.env.N1_TIMEOUT_MS ?? 180_000),
);

const loop = process.env.N1_LOOP === '1';
const existing = process.env.N1_DATABASE_URL;
const dir = mkdtempSync(path.join(tmpdir(), 'fleet-n1-'));
const dbName = existing
  ? new URL(existing).pathname.slice(1)
  : `fleet_n1_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const dbUrl = existing ?? Object.assign(new URL(ADMIN_URL), { pathname: `/${dbName}` }).toString();
let server;
let log = '';

async function admin(sql) {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function cleanup() {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  if (keep) return console.log(`kept ${dir} and database ${dbName}`);
  rmSync(dir, { recursive: true, force: true });
  if (!existing) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => {});
}

function fail(message) {
  console.error(`N-1 smoke FAILED: ${message}`);
  if (log) console.error(`previous release's server output:\n${log.slice(-4000)}`);
  cleanup().finally(() => process.exit(1));
}

/** Every package of the previous release's lockfile installed here at the same version: node_modules is reusable. */
function sameDependencies() {
  const then = JSON.parse(execFileSync('git', ['show', `${rev}:package-lock.json`], { cwd: root, encoding: 'utf8' }));
  const now = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  return Object.entries(then.packages).every(([p, v]) => p === '' || now.packages[p]?.version === v.version);
}

async function main() {
  console.log(`N-1 smoke: the server of ${rev.slice(0, 7)} on a database migrated by this tree`);
  if (!existing) await admin(`CREATE DATABASE "${dbName}"`);
  // This tree's migrator brings the database to HEAD's schema and makes an organisation and its key.
  const quick = execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', 'quickstart', '--json'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  const key = JSON.parse(quick).key.key;

  execSync(`git archive ${rev} | tar -x -C ${JSON.stringify(dir)}`, { cwd: root, stdio: 'inherit' });
  if (sameDependencies()) symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  else {
    // A hard-linked copy of this tree's packages that npm then brings to the old lockfile: only the packages that
    // differ are fetched (from the cache), where `npm ci` would unpack the whole tree again. npm replaces a package
    // by new files, never by writing into the linked ones; its hidden lockfile is the one it rewrites, so it goes.
    execFileSync('cp', ['-al', path.join(root, 'node_modules'), path.join(dir, 'node_modules')]);
    rmSync(path.join(dir, 'node_modules', '.package-lock.json'), { force: true });
    execSync('npm install --no-audit --no-fund --no-save --prefer-offline --loglevel=error', {
      cwd: dir,
      stdio: 'inherit',
    });
  }
  execFileSync(process.execPath, ['scripts/prisma-generate.mjs'], { cwd: dir, stdio: 'inherit' });

  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: dir,
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      INSTANCE_ID: 'n1-smoke',
      // One key calls for as long as the loop runs: the per-key limit (60 a minute) would answer 429.
      ...(loop && { RATE_LIMIT_PER_MINUTE: '100000000', PRE_AUTH_RATE_LIMIT_PER_MINUTE: '100000000' }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  server.on('exit', (code) => code !== null && code !== 0 && fail(`the previous release's server exited ${code}`));
  const base = `http://127.0.0.1:${PORT}/api/v1`;
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/health`).catch(() => null))?.ok) break;
    if (i > 120) return fail('the previous release did not become healthy in 60 s');
    await new Promise((r) => setTimeout(r, 500));
  }
  if (loop) return repeat(base, key);
  await smoke(base, key);
}

/** The smoke again and again until SIGUSR2: every pass's failure is kept, the next pass still runs. */
async function repeat(base, key) {
  clearTimeout(deadline);
  let stop = false;
  process.on('SIGUSR2', () => (stop = true));
  const cap = setTimeout(() => (stop = true), Number(process.env.N1_LOOP_MS ?? 3_600_000));
  const stats = { passes: 0, failed: 0, slowestMs: 0, failures: [] };
  while (!stop) {
    stats.passes++;
    try {
      await smoke(base, key, ` ${stats.passes}`, stats);
    } catch (err) {
      stats.failed++;
      if (stats.failures.length < 5) stats.failures.push(err.message);
      console.error(`N-1 smoke pass ${stats.passes} FAILED: ${err.message}`);
    }
  }
  clearTimeout(cap);
  stats.slowestMs = Math.round(stats.slowestMs);
  console.log(`N-1 loop: ${JSON.stringify(stats)}`);
  if (stats.failed) throw new Error(`${stats.failed} of ${stats.passes} passes failed`);
}

async function smoke(base, key, tag = '', stats = { slowestMs: 0 }) {
  let passed = 0;
  const call = async (method, url, body, expected, headers = {}) => {
    const t = performance.now();
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    stats.slowestMs = Math.max(stats.slowestMs, performance.now() - t);
    if (res.status !== expected)
      throw new Error(`${method} ${url}: expected ${expected}, got ${res.status} ${text.slice(0, 300)}`);
    passed++;
    return text ? JSON.parse(text) : {};
  };
  await call('GET', '/health', null, 200);
  await call('GET', '/me', null, 200);
  const { assetId } = await call('POST', '/assets', { nickname: `Excavator 1${tag}`, assetClass: 'off-road' }, 201);
  await call('GET', `/assets/${assetId}`, null, 200);
  await call('PATCH', `/assets/${assetId}`, { nickname: `Excavator 2${tag}` }, 200);
  await call('GET', '/assets?limit=10', null, 200);
  const idem = { 'idempotency-key': `n1-${randomBytes(8).toString('hex')}` };
  const first = await call('POST', '/assets', { nickname: `Loader 1${tag}`, assetClass: 'off-road' }, 201, idem);
  const replay = await call('POST', '/assets', { nickname: `Loader 1${tag}`, assetClass: 'off-road' }, 201, idem);
  if (replay.assetId !== first.assetId) throw new Error('Idempotency-Key replay answered another asset');
  const { logId } = await call('POST', '/hours', { assetId, hoursReading: 10 }, 201);
  await call('POST', '/hours', { assetId, hoursReading: 12 }, 201);
  await call('GET', `/hours?assetId=${assetId}`, null, 200);
  await call('GET', '/hours?reviewStatus=PENDING', null, 200);
  await call('GET', `/hours/${logId}`, null, 200);
  const { flagId } = await call('POST', '/flags', { assetId, severity: 'YELLOW' }, 201);
  await call('GET', `/flags?assetId=${assetId}`, null, 200);
  await call('GET', `/flags/${flagId}`, null, 200);
  await call('PATCH', `/flags/${flagId}`, { status: 'RESOLVED', resolutionNote: 'Hose replaced' }, 200);
  const { workOrderId } = await call('POST', '/work-orders', { title: `Fix it${tag}`, assetId, priority: 'HIGH' }, 201);
  await call('GET', '/work-orders', null, 200);
  await call('GET', '/work-orders?status=OPEN', null, 200);
  await call('GET', `/work-orders/${workOrderId}`, null, 200);
  await call('PATCH', `/work-orders/${workOrderId}`, { status: 'IN_PROGRESS' }, 200);
  const { repairId } = await call('POST', '/repairs', { assetId, cost: 10 }, 201);
  await call('GET', `/repairs?assetId=${assetId}`, null, 200);
  await call('GET', `/repairs/${repairId}`, null, 200);
  const { toolId } = await call('POST', '/tools', { name: `Drill${tag}` }, 201);
  await call('GET', '/tools', null, 200);
  await call('GET', '/tools?lowStock=true', null, 200);
  await call('GET', `/tools/${toolId}`, null, 200);
  await call('PATCH', `/tools/${toolId}`, { name: `Hammer drill${tag}` }, 200);
  await call('GET', `/tools/${toolId}/events`, null, 200);
  const { projectId } = await call('POST', '/projects', { name: `Depot rebuild${tag}` }, 201);
  await call('GET', '/projects', null, 200);
  await call('PATCH', `/projects/${projectId}`, { name: `Depot rebuild, phase 2${tag}` }, 200);
  await call('GET', `/projects/${projectId}/equipment-usage`, null, 200);
  const { yardId } = await call('POST', '/yards', { name: `Main yard${tag}` }, 201);
  await call('GET', '/yards', null, 200);
  await call('PATCH', `/yards/${yardId}`, { name: `North yard${tag}` }, 200);
  const hook = await call('POST', '/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['asset.created'] }, 201);
  await call('GET', '/webhooks', null, 200);
  await call('GET', `/webhooks/${hook.subscriptionId}/deliveries`, null, 200);
  await call('GET', '/events', null, 200);
  console.log(`N-1 smoke passed: ${passed} calls to ${rev.slice(0, 7)} on this tree's schema${tag && `, pass${tag}`}`);
}

main()
  .then(async () => {
    clearTimeout(deadline);
    await cleanup();
    process.exit(0);
  })
  .catch((err) => fail(err.message));
