import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createDeps, type AppDeps } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { redisWritePositions } from '../../src/db/write-positions.ts';
import { apiClient } from '../helpers/app/test-app.ts';
import { createTenant, type TestTenant } from '../helpers/app/tenants.ts';
import { REDIS_URL, waitFor } from '../helpers/processes/api-processes.ts';
import {
  startStreamingPair,
  streamingReplicaAvailable,
  PG_BIN,
  type StreamingPair,
} from '../helpers/db/streaming-replica.ts';
import { inCI, onPostgres, withTestKeys } from '../helpers/run/test-env.ts';

/**
 * Reads on a real streaming replica (a primary and a replica of the test's own, initdb + pg_basebackup -R), through
 * two apps with a database each, sharing the organisations' write positions in Redis as two API processes do.
 */
const PAIRS = Number(process.env.REPLICA_TEST_PAIRS ?? 300);
/** The primary's port; the replica's is the next one. */
const PORT = Number(process.env.REPLICA_TEST_PORT ?? 4800);

if (!onPostgres) console.warn('read replicas: skipped (needs TEST_DATABASE_URL: PostgreSQL binaries for a replica)');
else if (!streamingReplicaAvailable) {
  const message = `read replicas: initdb, pg_ctl and pg_basebackup not found in ${PG_BIN} (set PG_BIN)`;
  if (inCI) throw new Error(message);
  console.warn(`${message}: skipped`);
}

interface Instance {
  app: FastifyInstance;
  db: Database;
  deps: AppDeps;
  api: ReturnType<typeof apiClient>;
  close(): Promise<void>;
}

async function instance(pair: StreamingPair, prefix: string): Promise<Instance> {
  const env = withTestKeys({
    DATABASE_URL: pair.primaryUrl,
    DATABASE_REPLICA_URLS: pair.replicaUrl,
    REDIS_URL,
    RATE_LIMIT_PER_MINUTE: '1000000',
    PRE_AUTH_RATE_LIMIT_PER_MINUTE: '1000000',
    TELEMATICS_ENABLED: 'false',
    AUTH_CACHE_TTL_MS: '0',
  });
  const config = loadConfig(env);
  const db = await openDatabase({
    databaseUrl: pair.primaryUrl,
    dataDir: 'unused',
    poolSize: 6,
    replicas: {
      urls: config.replicas.urls,
      maxLagMs: config.replicas.maxLagMs,
      positions: redisWritePositions(REDIS_URL, 500, prefix),
    },
  });
  const deps = createDeps(config, db, pino({ level: 'silent' }) as unknown as FastifyBaseLogger);
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    db,
    deps,
    api: apiClient(app),
    async close() {
      await app.close();
      await deps.close();
      await db.close();
    },
  };
}

const healthy = (i: Instance) => i.db.replicas!.status().every((r) => r.state === 'healthy');

describe.skipIf(!onPostgres || !streamingReplicaAvailable)('reads on a streaming replica', () => {
  let pair: StreamingPair;
  let a: Instance;
  let b: Instance;
  let writer: TestTenant;
  let reader: TestTenant;
  beforeAll(async () => {
    pair = await startStreamingPair([PORT, PORT + 1]);
    const setup = await openDatabase({ databaseUrl: pair.primaryUrl, dataDir: 'unused', poolSize: 2 });
    await migrate(setup.sql);
    writer = await createTenant(setup, 'Writer Haulage');
    reader = await createTenant(setup, 'Reader Plant');
    await setup.close();
    const prefix = `fleet:test:wal:${randomBytes(6).toString('hex')}:`;
    [a, b] = await Promise.all([instance(pair, prefix), instance(pair, prefix)]);
    await waitFor('replica healthy', () => healthy(a) && healthy(b), 15_000, 100);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await pair?.stop();
  }, 60_000);

  it('a read right after a write, through the other app, never sees an older state', async () => {
    const before = { ...b.db.replicas!.reads };
    let stale = 0;
    for (let i = 0; i < PAIRS; i++) {
      const nickname = `Excavator ${i}`;
      const created = await a.api.post('/api/v1/assets', writer.key, { nickname, assetClass: 'off-road' });
      expect(created.statusCode).toBe(201);
      const id = created.json().assetId as string;
      const read = await b.api.get(`/api/v1/assets/${id}`, writer.key);
      if (read.statusCode !== 200 || !read.body.includes(nickname)) stale++;
      const renamed = `${nickname} renamed`;
      expect((await a.api.patch(`/api/v1/assets/${id}`, writer.key, { nickname: renamed })).statusCode).toBe(200);
      const again = await b.api.get(`/api/v1/assets/${id}`, writer.key);
      if (again.statusCode !== 200 || !again.body.includes(renamed)) stale++;
      // The other organisation keeps reading, from the replica.
      expect((await b.api.get('/api/v1/assets?limit=5', reader.key)).statusCode).toBe(200);
    }
    expect(stale).toBe(0);
    const after = b.db.replicas!.reads;
    // The replica answers a share of the reads: the organisation that did not write reads there every time.
    expect(after.replica - before.replica).toBeGreaterThanOrEqual(PAIRS);
  }, 300_000);

  it('an idle primary means no lag: the replica keeps the reads however old its last replayed commit is', async () => {
    const lastCommitAge = async () => {
      const [{ age }] = (await pair.onReplica(
        `SELECT extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000 AS age`,
      )) as { age: number }[];
      return Number(age);
    };
    // Requests' after-work (a key's last use) may still commit for a moment: wait for a quiet primary.
    await waitFor('no commit for 5.5 s', async () => (await lastCommitAge()) > 5_500, 25_000, 200);
    await new Promise((r) => setTimeout(r, 600)); // one more check of the replica
    const replica = b.db.replicas!.status()[0];
    expect(replica.state).toBe('healthy');
    expect(replica.lagMs).toBeLessThan(1_000);
    const before = b.db.replicas!.reads.replica;
    expect((await b.api.get('/api/v1/assets?limit=5', reader.key)).statusCode).toBe(200);
    expect(b.db.replicas!.reads.replica).toBeGreaterThan(before);
  }, 40_000);

  it('with replay paused, the organisation that wrote reads from the primary, the others from the replica', async () => {
    const id = (await a.api.post('/api/v1/assets', writer.key, { nickname: 'Loader', assetClass: 'off-road' })).json()
      .assetId as string;
    await waitFor(
      'replica caught up',
      async () => (await b.api.get(`/api/v1/assets/${id}`, writer.key)).statusCode === 200,
      5_000,
      50,
    );
    await pair.onReplica('SELECT pg_wal_replay_pause()');
    try {
      expect((await a.api.patch(`/api/v1/assets/${id}`, writer.key, { nickname: 'Loader paused' })).statusCode).toBe(
        200,
      );
      const before = { ...b.db.replicas!.reads };
      const read = await b.api.get(`/api/v1/assets/${id}`, writer.key);
      expect(read.statusCode).toBe(200);
      expect(read.body).toContain('Loader paused');
      const mid = { ...b.db.replicas!.reads };
      expect(mid.primary).toBeGreaterThan(before.primary);
      expect(mid.replica).toBe(before.replica);
      const other = await b.api.get('/api/v1/assets?limit=5', reader.key);
      expect(other.statusCode).toBe(200);
      expect(b.db.replicas!.reads.replica).toBeGreaterThan(mid.replica);
      // The replica that stands still while the primary moves on shows its lag, and is left out once it is more
      // than REPLICA_MAX_LAG_MS (5 s) behind: then everyone reads from the primary, and nothing fails.
      await waitFor('lag shown', () => (b.db.replicas!.status()[0].lagBytes ?? 0) > 0, 1_500, 20);
      const health = await b.app.inject({ method: 'GET', url: '/api/v1/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json().replicas[0]).toMatchObject({ state: 'healthy', lagBytes: expect.any(Number) });
      await waitFor('lagging replica left out', () => b.db.replicas!.status()[0].state === 'lagging', 8_000, 50);
      const late = (await b.app.inject({ method: 'GET', url: '/api/v1/health' })).json().replicas[0];
      expect(late.lagMs).toBeGreaterThan(5_000);
      const onPrimary = b.db.replicas!.reads.primary;
      expect((await b.api.get('/api/v1/assets?limit=5', reader.key)).statusCode).toBe(200);
      expect(b.db.replicas!.reads.primary).toBeGreaterThan(onPrimary);
    } finally {
      await pair.onReplica('SELECT pg_wal_replay_resume()');
    }
    await waitFor('replica caught up', () => healthy(b) && b.db.replicas!.status()[0].lagBytes === 0, 10_000, 100);
  }, 60_000);

  it('a replica stopped under load fails no request, and gets reads again once it is back', async () => {
    let stop = false;
    let failed = 0;
    let served = 0;
    const load = async (t: TestTenant) => {
      while (!stop) {
        const res = await b.api.get('/api/v1/assets?limit=20', t.key);
        if (res.statusCode === 200) served++;
        else failed++;
      }
    };
    const loads = [load(reader), load(reader), load(writer)];
    try {
      await new Promise((r) => setTimeout(r, 300));
      await pair.stopReplica();
      const stoppedAt = Date.now();
      await waitFor('replica left out', () => b.db.replicas!.status()[0].state === 'down', 2_000, 20);
      expect(Date.now() - stoppedAt).toBeLessThan(1_500);
      const health = await b.app.inject({ method: 'GET', url: '/api/v1/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json().replicas[0].state).toBe('down');
      await new Promise((r) => setTimeout(r, 500));
      const beforeBack = b.db.replicas!.reads.replica;
      await pair.startReplica();
      const startedAt = Date.now();
      await waitFor('replica taken back', () => healthy(b), 30_000, 50);
      expect(Date.now() - startedAt).toBeLessThan(30_000);
      await waitFor('reads on the replica again', () => b.db.replicas!.reads.replica > beforeBack + 10, 5_000, 20);
    } finally {
      stop = true;
      await Promise.all(loads);
    }
    expect(failed).toBe(0);
    expect(served).toBeGreaterThan(50);
  }, 120_000);
});
