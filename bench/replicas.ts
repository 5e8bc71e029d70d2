// Read replicas under a read-heavy load: where reads run. A primary and a streaming replica of the benchmark's own
// (initdb, pg_basebackup -R; pg_stat_statements on both; synchronous_commit on, as PostgreSQL ships), two API
// processes (node dist/main.js) with DATABASE_REPLICA_URLS sharing the organisations' write positions in Redis,
// BENCH_ORGS organisations with BENCH_KEYS keys each (the scale seed at BENCH_ORG_SCALE: 2,000 assets, 38,000
// readings, work orders, flags, tools each). BENCH_WORKERS closed loops send requests of random organisations to
// either process: BENCH_WRITE_PERCENT writes (readings, flags, renames, work orders), the rest reads (lists,
// details, an asset's cost report, the event feed). Per round: the primary's share of the read requests'
// statements (the API's db_read_statements_total) and of every SELECT the two servers ran (pg_stat_statements,
// the replica checks left out: this counts the key lookups and the writes' own reads too). Baseline in the same
// run, rounds alternating: the same load with no writes (read-your-writes then sends nothing to the primary).
// Last, the replica is stopped under the mixed load and started again: failed requests, and how long until both
// processes read from it again.
// Usage: npm run build && npm run bench:replicas   Env: BENCH_ORGS (20), BENCH_KEYS (3), BENCH_ORG_SCALE (0.02),
// BENCH_WORKERS (16), BENCH_WRITE_PERCENT (10), BENCH_DURATION s (20), BENCH_ROUNDS (3), BENCH_PORT (4350, two
// ports), BENCH_PG_PORT (5450, two ports), BENCH_REDIS_URL (redis://127.0.0.1:6379), PG_BIN.
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { startStreamingPair, type StreamingPair } from '../test/helpers/db/streaming-replica.ts';
import { log, num, sleep, text } from './lib/env.ts';
import { resetServerReads, routedReads, runMix, serverReads, type MixOrg, type MixResult } from './lib/replica-mix.ts';
import { writeResults } from './lib/results.ts';
import { seedOrganisation } from './lib/scale/seed.ts';
import { createBenchTenant } from './lib/seed.ts';
import { healthUrl, requireBuild, startApi, stopAll, type Server } from './lib/server.ts';
import { median, round } from './lib/stats.ts';

const ORGS = num('BENCH_ORGS', 20);
const KEYS = num('BENCH_KEYS', 3);
const ORG_SCALE = num('BENCH_ORG_SCALE', 0.02);
const WORKERS = num('BENCH_WORKERS', 16);
const WRITE_PERCENT = num('BENCH_WRITE_PERCENT', 10);
const DURATION = num('BENCH_DURATION', 20);
const ROUNDS = num('BENCH_ROUNDS', 3);
const PORT = num('BENCH_PORT', 4350);
const PG_PORT = num('BENCH_PG_PORT', 5450);
const REDIS_URL = text('BENCH_REDIS_URL', 'redis://127.0.0.1:6379');
const TOKEN = 'bench-replicas-metrics-token';
const ports = [PORT, PORT + 1];

requireBuild();

/** The primary's database: migrated, the organisations seeded, VACUUM ANALYZE (the pair runs no autovacuum). */
async function seed(url: string): Promise<MixOrg[]> {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused', poolSize: 2 });
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  try {
    await db.sql.exec('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await migrate(db.sql);
    const admin = createOrgAdmin(db);
    const orgs: MixOrg[] = [];
    const t = Date.now();
    for (let i = 0; i < ORGS; i++) {
      const slug = `replica-${i}`;
      const tenant = await createBenchTenant(db, slug, { rateLimit: '100000000' });
      const keys = [tenant.key];
      while (keys.length < KEYS) {
        const key = await admin.createKey({
          orgSlug: slug,
          userEmail: `${slug}@example.com`,
          label: `bench ${keys.length}`,
          rateLimit: '100000000',
        });
        keys.push(key.key);
      }
      await seedOrganisation(raw, { orgId: tenant.orgId, tag: slug }, tenant.userId, ORG_SCALE, () => {});
      orgs.push({ tag: slug, keys, assets: Math.round(100_000 * ORG_SCALE) });
    }
    await db.sql.exec('VACUUM ANALYZE');
    log(`seeded ${ORGS} organisations in ${((Date.now() - t) / 1000).toFixed(0)} s`);
    return orgs;
  } finally {
    await raw.end();
    await db.close();
  }
}

async function replicaStates(): Promise<string[]> {
  const states: string[] = [];
  for (const port of ports) {
    const body = (await (await fetch(healthUrl(port))).json()) as { replicas?: { state: string }[] };
    states.push(...(body.replicas ?? []).map((r) => r.state));
  }
  return states;
}

async function untilHealthy(timeoutMs: number): Promise<number> {
  const t = performance.now();
  while ((await replicaStates()).some((s) => s !== 'healthy')) {
    if (performance.now() - t > timeoutMs) throw new Error(`replica not healthy within ${timeoutMs} ms`);
    await sleep(50);
  }
  return performance.now() - t;
}

interface Round {
  mix: MixResult;
  api: { replica: number; primary: number };
  primarySelects: number;
  replicaSelects: number;
  primaryTop: { calls: number; query: string }[];
}

async function measure(pair: StreamingPair, orgs: MixOrg[], writePercent: number): Promise<Round> {
  await Promise.all([resetServerReads(pair.primaryUrl), resetServerReads(pair.replicaUrl)]);
  const before = await routedReads(ports, TOKEN);
  const mix = await runMix(ports, orgs, { workers: WORKERS, seconds: DURATION, writePercent });
  const after = await routedReads(ports, TOKEN);
  const [primary, replica] = await Promise.all([serverReads(pair.primaryUrl), serverReads(pair.replicaUrl)]);
  return {
    mix,
    api: { replica: after.replica - before.replica, primary: after.primary - before.primary },
    primarySelects: primary.selects,
    replicaSelects: replica.selects,
    primaryTop: primary.top,
  };
}

const share = (primary: number, replica: number) => primary / Math.max(1, primary + replica);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function summary(rounds: Round[]) {
  return {
    requestsPerSecond: round(median(rounds.map((r) => (r.mix.reads + r.mix.writes) / r.mix.seconds)), 0),
    failed: rounds.reduce((s, r) => s + r.mix.failed, 0),
    firstFailure: rounds.find((r) => r.mix.firstFailure)?.mix.firstFailure ?? null,
    apiPrimaryShare: round(median(rounds.map((r) => share(r.api.primary, r.api.replica))), 4),
    apiPrimaryShareRounds: rounds.map((r) => round(share(r.api.primary, r.api.replica), 4)),
    readStatements: rounds.map((r) => r.api),
    serverPrimaryShare: round(median(rounds.map((r) => share(r.primarySelects, r.replicaSelects))), 4),
    serverSelects: rounds.map((r) => ({ primary: r.primarySelects, replica: r.replicaSelects })),
    primaryTop: rounds[rounds.length - 1].primaryTop,
  };
}

/** The replica stopped under the mixed load, then started again: failures, and time until both processes use it. */
async function failover(pair: StreamingPair, orgs: MixOrg[]) {
  const load = runMix(ports, orgs, { workers: WORKERS, seconds: 20, writePercent: WRITE_PERCENT });
  await sleep(4_000);
  await pair.stopReplica();
  const stoppedAt = performance.now();
  while (!(await replicaStates()).every((s) => s === 'down')) {
    if (performance.now() - stoppedAt > 5_000) throw new Error('the stopped replica was not left out within 5 s');
    await sleep(20);
  }
  const leftOutMs = performance.now() - stoppedAt;
  await sleep(4_000);
  const startedAt = performance.now();
  await pair.startReplica();
  const upMs = performance.now() - startedAt;
  await untilHealthy(30_000);
  const backMs = performance.now() - startedAt;
  const mix = await load;
  return {
    leftOutMs: round(leftOutMs, 0),
    /** `pg_ctl start -w`: until the replica accepts connections. */
    upMs: round(upMs, 0),
    backMs: round(backMs, 0),
    requests: mix.reads + mix.writes,
    failed: mix.failed,
    firstFailure: mix.firstFailure,
  };
}

const servers: Server[] = [];
let pair: StreamingPair | undefined;
try {
  pair = await startStreamingPair(
    [PG_PORT, PG_PORT + 1],
    ['shared_preload_libraries = pg_stat_statements', 'synchronous_commit = on', 'max_connections = 100'],
  );
  log(`primary on ${PG_PORT}, replica on ${PG_PORT + 1}`);
  const orgs = await seed(pair.primaryUrl);
  for (const [i, port] of ports.entries()) {
    const { server } = await startApi({
      port,
      env: {
        DATABASE_URL: pair.primaryUrl,
        DATABASE_REPLICA_URLS: pair.replicaUrl,
        REDIS_URL,
        METRICS_TOKEN: TOKEN,
        PRE_AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
        TELEMATICS_ENABLED: 'false',
        INSTANCE_ID: `bench-replicas-${i}`,
      },
    });
    servers.push(server);
  }
  await untilHealthy(15_000);
  await runMix(ports, orgs, { workers: WORKERS, seconds: 5, writePercent: WRITE_PERCENT });
  const mixed: Round[] = [];
  const readsOnly: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const writes of r % 2 ? [0, WRITE_PERCENT] : [WRITE_PERCENT, 0]) {
      const m = await measure(pair, orgs, writes);
      (writes ? mixed : readsOnly).push(m);
      log(
        `round ${r + 1}, ${writes}% writes: ${((m.mix.reads + m.mix.writes) / m.mix.seconds).toFixed(0)} req/s, ` +
          `${m.mix.failed} failed; read statements on the primary ${pct(share(m.api.primary, m.api.replica))} ` +
          `(${m.api.primary} of ${m.api.primary + m.api.replica}); every SELECT: primary ${m.primarySelects}, ` +
          `replica ${m.replicaSelects}`,
      );
    }
  }
  const results = { mixed: summary(mixed), readsOnly: summary(readsOnly), failover: await failover(pair, orgs) };
  log(JSON.stringify(results.failover));
  console.log(
    `\n| Load (${WORKERS} clients, ${ORGS} organisations) | req/s | failed | read requests' statements on the primary | every SELECT on the primary |`,
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, s] of [
    [`${WRITE_PERCENT}% writes`, results.mixed],
    ['reads only (baseline)', results.readsOnly],
  ] as const)
    console.log(
      `| ${name} | ${s.requestsPerSecond} | ${s.failed} | ${pct(s.apiPrimaryShare)} (rounds ${s.apiPrimaryShareRounds.map(pct).join(', ')}) | ${pct(s.serverPrimaryShare)} |`,
    );
  writeResults('replicas', results);
} finally {
  await stopAll(servers);
  await pair?.stop();
}
