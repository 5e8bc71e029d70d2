// What pooler safety costs on the hot writes: POST /hours and POST /hours/batch (the statements that
// used named prepared statements) on three servers over one database, in alternating rounds:
//   named      direct connection, the default (DB_PREPARED_STATEMENTS=auto finds a direct session: parsed once per
//              connection)
//   unnamed    direct connection, DB_PREPARED_STATEMENTS=false (parsed on every call, as through a pooler)
//   pgbouncer  DATABASE_URL through PgBouncer in transaction mode (scripts/pgbouncer.sh), the default (auto finds
//              the pooler: unnamed)
// Each figure is the median over rounds of requests/s at 10 concurrent; ratios to `named` are taken within each
// round (the order of the variants rotates), then their median.
//
// Usage: npm run bench:pooler (the pgbouncer variant when PgBouncer is installed or this runs as root)
// Env: BENCH_DATABASE_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_ROUNDS (3),
//      BENCH_SAMPLES (60: 2x that many requests per measurement), BENCH_PGBOUNCER_PORT (6433), BENCH_PGBOUNCER=0
//      (direct variants only), BENCH_PORT (4330, the first of three ports).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, log, num } from './lib/env.ts';
import { apiClient, concurrent, type Call } from './lib/http-client.ts';
import { writeResults } from './lib/results.ts';
import { createBenchTenant } from './lib/seed.ts';
import { API_ENTRY, startApi, stopAll, type Server } from './lib/server.ts';
import { median, round, roundRatios, timed } from './lib/stats.ts';

const ROUNDS = num('BENCH_ROUNDS', 3);
const SAMPLES = num('BENCH_SAMPLES', 60);
const PGBOUNCER_PORT = num('BENCH_PGBOUNCER_PORT', 6433);
const FIRST_PORT = num('BENCH_PORT', 4330);
const SCRIPT = fileURLToPath(new URL('../scripts/pgbouncer.sh', import.meta.url));

const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_pooler');
const servers: Server[] = [];
// scripts/pgbouncer.sh installs PgBouncer when missing and run as root; BENCH_PGBOUNCER=0 measures the direct
// variants only.
const withBouncer =
  process.env.BENCH_PGBOUNCER !== '0' && (existsSync('/usr/sbin/pgbouncer') || process.getuid?.() === 0);
try {
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 2 });
  await migrate(db.sql);
  const { key } = await createBenchTenant(db, 'bench-pooler');
  await db.close();

  let pooledUrl: string | null = null;
  if (withBouncer) {
    const upstream = new URL(ADMIN_URL);
    execFileSync('bash', [SCRIPT, 'start', String(PGBOUNCER_PORT), '10'], {
      stdio: 'inherit',
      env: {
        ...process.env,
        PGBOUNCER_UPSTREAM_HOST: upstream.hostname,
        PGBOUNCER_UPSTREAM_PORT: upstream.port || '5432',
      },
    });
    const u = new URL(scratch.url);
    u.host = `127.0.0.1:${PGBOUNCER_PORT}`;
    pooledUrl = u.toString();
  } else log('pgbouncer is not installed: measuring the direct variants only');

  const variants = (
    [
      { name: 'named', env: { DATABASE_URL: scratch.url } },
      { name: 'unnamed', env: { DATABASE_URL: scratch.url, DB_PREPARED_STATEMENTS: 'false' } },
      ...(pooledUrl ? [{ name: 'pgbouncer', env: { DATABASE_URL: pooledUrl } }] : []),
    ] as { name: string; env: Record<string, string> }[]
  ).map((v, i) => ({ ...v, port: FIRST_PORT + i }));

  for (const v of variants)
    servers.push((await startApi({ port: v.port, args: API_ENTRY.tsx, env: v.env, inheritEnv: true })).server);
  const clients = variants.map((v) => apiClient(v.port, key));
  const call: Call = clients[0].call;
  const assets: string[] = [];
  for (let i = 0; i < 20; i++) {
    const body = JSON.stringify({ nickname: `Bench ${i}`, assetClass: 'off-road' });
    assets.push(JSON.parse(Buffer.from(await call('/assets', { method: 'POST', body })).toString()).assetId);
  }
  // Concurrent readings of one asset may arrive out of order: the note keeps every one a plain 201.
  let reading = 0;
  const note = 'bench (concurrent readings may arrive out of order)';
  const hours = (c: Call) => () =>
    c('/hours', {
      method: 'POST',
      body: JSON.stringify({ assetId: assets[reading % 20], hoursReading: ++reading, note }),
    });
  const batch = (c: Call) => () =>
    c('/hours/batch', {
      method: 'POST',
      body: JSON.stringify({
        entries: Array.from({ length: 10 }, () => ({ assetId: assets[reading % 20], hoursReading: ++reading, note })),
      }),
    });
  const n = SAMPLES * 2;
  const runs = variants.map(() => ({ hours: [] as number[], batch: [] as number[] }));
  for (const [i, c] of clients.entries()) {
    await concurrent(hours(c.call), 50); // warm-up: JIT and pool connections
    await concurrent(batch(c.call), 20);
    log(`${variants[i].name}: warmed up`);
  }
  for (let r = 0; r < ROUNDS; r++) {
    // Each round starts with the next variant, so none is always measured first (right after another's burst).
    for (let k = 0; k < clients.length; k++) {
      const i = (r + k) % clients.length;
      runs[i].hours.push(n / ((await timed(() => concurrent(hours(clients[i].call), n))) / 1000));
      runs[i].batch.push(n / ((await timed(() => concurrent(batch(clients[i].call), n))) / 1000));
    }
    log(`round ${r + 1}/${ROUNDS} done`);
  }
  // Ratios within each round (the machine's load moves all variants of a round alike), then their median.
  const ratio = (i: number, k: 'hours' | 'batch') => roundRatios(runs[i][k], runs[0][k]).median;
  console.log('\nvariant    POST /hours: req/s, ratio to named   POST /hours/batch of 10: req/s, ratio');
  for (const [i, v] of variants.entries()) {
    const h = median(runs[i].hours);
    const b = median(runs[i].batch);
    console.log(
      `${v.name.padEnd(10)} ${h.toFixed(0).padStart(6)}  ${ratio(i, 'hours').toFixed(2)}x ${' '.repeat(22)}${b.toFixed(0).padStart(6)}  ${ratio(i, 'batch').toFixed(2)}x`,
    );
    console.log(
      `           rounds: ${runs[i].hours.map((x) => x.toFixed(0)).join(', ')} | ${runs[i].batch.map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
  await Promise.all(clients.map((c) => c.close()));
  writeResults('pooler', {
    rounds: ROUNDS,
    requestsPerMeasurement: n,
    variants: variants.map((v, i) => ({
      name: v.name,
      hoursPerSecond: round(median(runs[i].hours), 0),
      hoursRatio: round(ratio(i, 'hours'), 2),
      batchPerSecond: round(median(runs[i].batch), 0),
      batchRatio: round(ratio(i, 'batch'), 2),
    })),
  });
} finally {
  await stopAll(servers);
  if (withBouncer) execFileSync('bash', [SCRIPT, 'stop', String(PGBOUNCER_PORT)]);
  await scratch.drop().catch(() => {});
}
