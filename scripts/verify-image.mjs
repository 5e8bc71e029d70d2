// CI: the production image's layout, proved without Docker. Rebuilds what the Dockerfile ships in a fresh
// directory (runtime-files.txt and `npm ci --omit=dev` through scripts/stage-runtime.mjs), and runs it the
// way the image does: plain `node dist/main.js` as an unprivileged user, against a scratch database on the
// machine's PostgreSQL. Checks /api/v1/health, runs the admin CLI's quickstart from the same layout, makes an
// authenticated call, reads the changelog, a contract document and /docs with its scripts (files the server
// reads at run time),
// then stops it with SIGTERM and requires exit code 0.
// Usage: npm run build && node scripts/verify-image.mjs
// Env: CI_POSTGRES_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres), VERIFY_USER (the
// unprivileged user when run as root, default nobody), VERIFY_PORT (4399),
// VERIFY_KEEP=1 keeps the directory.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { INSTALL_ARGS, stageRuntime } from './stage-runtime.mjs';

const ADMIN_URL = process.env.CI_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const PORT = Number(process.env.VERIFY_PORT ?? 4399);
const RUN_AS = process.env.VERIFY_USER ?? 'nobody';
// Packages that must never reach the image: transpilers, compilers, the Prisma CLI, test tools.
const DEV_ONLY = ['tsx', 'typescript', 'esbuild', 'prisma', 'vitest', 'supertest', 'autocannon'];

const step = (text) => console.log(`-- ${text}`);
const fail = (text) => {
  throw new Error(text);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function onServer(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** uid/gid of the unprivileged user when we are root (CI); otherwise we already are unprivileged. */
function identity() {
  if (process.getuid?.() !== 0) {
    console.log(`(not root: the server runs as the current user, uid ${process.getuid?.()})`);
    return {};
  }
  const uid = Number(execFileSync('id', ['-u', RUN_AS], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', RUN_AS], { encoding: 'utf8' }).trim());
  if (!uid) fail(`${RUN_AS} is root`);
  return { uid, gid };
}

function filesUnder(dir, skip) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skip.includes(entry.name)) out.push(...filesUnder(full, skip));
    } else out.push(full);
  }
  return out;
}

async function waitHealthy(server, deadlineMs, port = PORT) {
  const t0 = Date.now();
  for (;;) {
    if (server.exitCode !== null) fail(`server exited with ${server.exitCode} before it was healthy`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (res.ok) return { ms: Date.now() - t0, body: await res.json() };
    } catch {
      // not listening yet
    }
    if (Date.now() - t0 > deadlineMs) fail(`not healthy after ${deadlineMs} ms`);
    await sleep(50);
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'fleet-image-'));
const app = path.join(work, 'app');
const dbName = `fleet_image_${randomBytes(4).toString('hex')}`;
let server;
try {
  step(`staging runtime-files.txt into ${app}, then npm ${INSTALL_ARGS.join(' ')} (as the image's build stage)`);
  stageRuntime(app, { install: true });
  const leaked = DEV_ONLY.filter((name) => existsSync(path.join(app, 'node_modules', name)));
  if (leaked.length) fail(`development packages in the production layout: ${leaked.join(', ')}`);
  const mbOf = (dir) => spawnSync('du', ['-sm', dir], { encoding: 'utf8' }).stdout.split('\t')[0];
  step(`layout size: ${mbOf(app)} MB, of which node_modules ${mbOf(path.join(app, 'node_modules'))} MB`);
  // Thumbnails need sharp's native binary for this platform in the layout, not only its JavaScript.
  const sharp = spawnSync(process.execPath, ['-e', "require('sharp'); console.log(require('sharp').versions.vips)"], {
    cwd: app,
    encoding: 'utf8',
  });
  if (sharp.status !== 0) fail(`sharp cannot load in the production layout: ${sharp.stderr.trim().split('\n')[0]}`);
  step(`sharp loads (libvips ${sharp.stdout.trim()})`);
  const sources = filesUnder(app, ['node_modules']).filter((f) => /\.(ts|mts|cts)$/.test(f) && !f.endsWith('.d.ts'));
  if (sources.length) fail(`TypeScript sources in the production layout: ${sources.slice(0, 5).join(', ')}`);

  // The image's files belong to root and are only readable by the app user; mkdtemp made the parent 0700.
  chmodSync(work, 0o755);
  const dataDir = path.join(work, 'data');
  mkdirSync(dataDir);
  const who = identity();
  if (who.uid !== undefined) execFileSync('chown', [`${who.uid}:${who.gid}`, dataDir]);

  await onServer(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(PORT),
    DATA_DIR: dataDir,
    DATABASE_URL: dbUrl.toString(),
    // PostgreSQL needs the key of webhook secrets; a throwaway one for this check.
    SECRETS_ENCRYPTION_KEYS: `verify:${randomBytes(32).toString('base64')}`,
    LOG_LEVEL: 'warn',
    GIT_COMMIT: 'verify-image',
    GIT_BRANCH: 'ci',
  };

  step(`starting node dist/main.js as ${who.uid === undefined ? 'the current user' : `${RUN_AS} (uid ${who.uid})`}`);
  server = spawn(process.execPath, ['dist/main.js'], {
    cwd: app,
    env,
    ...who,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));
  const first = await waitHealthy(server, 60_000);
  step(`healthy after ${first.ms} ms (first start: migrations applied): ${JSON.stringify(first.body)}`);
  if (who.uid !== undefined) {
    const uidLine = readFileSync(`/proc/${server.pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Uid:'));
    if (Number(uidLine?.split(/\s+/)[1]) !== who.uid) fail(`server runs as ${uidLine}, not ${RUN_AS}`);
  }

  step('admin CLI quickstart from the same layout');
  const quick = spawnSync(process.execPath, ['dist/cli/admin.js', 'quickstart', '--json'], {
    cwd: app,
    env,
    ...who,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (quick.status !== 0) fail(`quickstart exited with ${quick.status}: ${quick.stderr}`);
  const { key, organization } = JSON.parse(quick.stdout);
  if (!key?.key || !organization?.slug) fail(`quickstart printed ${quick.stdout}`);

  step('authenticated call: GET /api/v1/me');
  const me = await fetch(`http://127.0.0.1:${PORT}/api/v1/me`, { headers: { authorization: `Bearer ${key.key}` } });
  const meBody = await me.json();
  if (me.status !== 200 || JSON.stringify(meBody).indexOf(organization.id) === -1)
    fail(`/api/v1/me answered ${me.status} ${JSON.stringify(meBody)}`);
  const unauthenticated = await fetch(`http://127.0.0.1:${PORT}/api/v1/me`);
  if (unauthenticated.status !== 401) fail(`/api/v1/me without a key answered ${unauthenticated.status}`);

  step('files read at run time: changelog, contracts, build info, /docs and its scripts');
  const changelog = await (await fetch(`http://127.0.0.1:${PORT}/api/v1/changelog`)).json();
  if (!Array.isArray(changelog.entries) || changelog.entries.length === 0)
    fail(`changelog: ${JSON.stringify(changelog)}`);
  const openapi = await fetch(`http://127.0.0.1:${PORT}/openapi.yaml`);
  if (openapi.status !== 200 || !(await openapi.text()).startsWith('openapi: 3.1'))
    fail(`/openapi.yaml answered ${openapi.status}`);
  const version = await (await fetch(`http://127.0.0.1:${PORT}/api/v1/version`)).json();
  if (version.branch !== 'ci') fail(`version: ${JSON.stringify(version)}`);
  // /docs: the reference's browser bundle is copied into dist/ by the build (its npm package is dev-only).
  const docs = await fetch(`http://127.0.0.1:${PORT}/docs`);
  const scripts = [...(await docs.text()).matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
  if (docs.status !== 200 || scripts.length !== 2) fail(`/docs answered ${docs.status} with scripts ${scripts}`);
  for (const src of scripts) {
    const script = await fetch(`http://127.0.0.1:${PORT}${src}`);
    if (script.status !== 200 || (await script.arrayBuffer()).byteLength === 0)
      fail(`${src} answered ${script.status}`);
  }
  const webhooksPage = await fetch(`http://127.0.0.1:${PORT}/docs/webhooks`);
  if (webhooksPage.status !== 200) fail(`/docs/webhooks answered ${webhooksPage.status}`);

  step('SIGTERM');
  server.kill('SIGTERM');
  const end = await Promise.race([exited, sleep(30_000).then(() => ({ code: 'timeout' }))]);
  if (end.code !== 0) fail(`server ended with ${JSON.stringify(end)} after SIGTERM, expected exit code 0`);

  step('second start (migrations already applied)');
  server = spawn(process.execPath, ['dist/main.js'], {
    cwd: app,
    env,
    ...who,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited2 = new Promise((resolve) => server.once('exit', (code) => resolve({ code })));
  const second = await waitHealthy(server, 30_000);
  step(`healthy after ${second.ms} ms`);
  server.kill('SIGTERM');
  const end2 = await exited2;
  if (end2.code !== 0) fail(`second run ended with ${JSON.stringify(end2)}`);
  server = undefined;
  console.log('image layout OK');
} catch (err) {
  console.error(`verify-image: ${err.message}`);
  process.exitCode = 1;
} finally {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  await onServer(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch((err) =>
    console.error(`drop ${dbName}: ${err.message}`),
  );
  if (process.env.VERIFY_KEEP === '1') console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
