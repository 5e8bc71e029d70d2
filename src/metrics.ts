import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { lazyModule } from './core/lazy-module.ts';
import { errorBody } from './core/errors.ts';
import type { Database } from './db/database.ts';
import type { ReplicaSet } from './db/replicas.ts';
import { registerHttpMetrics } from './http/request-metrics.ts';

// Loaded only by a process whose metrics can be read: it costs start-up time (docs/adr/0010-lazy-start-up.md).
const promClient = lazyModule<typeof import('prom-client')>('prom-client');

/** `webhook_deliveries_total{outcome}`: one per attempt; an unsent last attempt counts as abandoned. */
export type DeliveryMetricOutcome = 'delivered' | 'failed' | 'abandoned' | 'skipped_circuit_open';

/** `telematics_runs_total{outcome}`: lease_lost is a run another instance took over (it records no outcome). */
export type TelematicsRunOutcome = 'succeeded' | 'failed' | 'lease_lost' | 'interrupted';

export interface Metrics {
  /** Null when metrics are off. */
  registry: Registry | null;
  rateLimited(): void;
  delivery(outcome: DeliveryMetricOutcome): void;
  /** A telematics run ended: its outcome and the readings it created and skipped. */
  telematicsRun(outcome: TelematicsRunOutcome, readings: { created: number; skipped: number }): void;
  /** Records every response; the route is the pattern (`/api/v1/assets/:id`), never the raw URL. */
  register(app: FastifyInstance): void;
}

/**
 * Prometheus metrics of one process, on their own registry (several apps can live in one test process).
 * Gauges that need the database (webhook queue) are read on scrape, never on the request path.
 *
 * Only when they can be read (`enabled`: METRICS_TOKEN is set, so GET /metrics exists): otherwise nothing is
 * counted, no hook is added to the requests, prom-client's default collectors (a GC observer, an event-loop
 * monitor) are not started and the package is not loaded.
 */
export function createMetrics(db: Database, { enabled }: { enabled: boolean }): Metrics {
  if (!enabled)
    return { registry: null, rateLimited: () => {}, delivery: () => {}, telematicsRun: () => {}, register: () => {} };
  const { Counter, Gauge, Registry, collectDefaultMetrics } = promClient();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const rateLimited = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429',
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (skipped_circuit_open: not sent, receiver known to be failing)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const telematicsRuns = new Counter({
    name: 'telematics_runs_total',
    help: 'Telematics feed runs by outcome (lease_lost: another instance took the run over; interrupted: shutdown)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const telematicsReadings = new Counter({
    name: 'telematics_readings_total',
    help: 'Meter readings from telematics feeds: created, or skipped (not above or not later than the latest)',
    labelNames: ['result'],
    registers: [registry],
  });
  new Gauge({
    name: 'webhook_queue_depth',
    help: 'Deliveries waiting to be sent (PENDING or FAILED awaiting retry)',
    registers: [registry],
    async collect() {
      const [row] = await db.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status IN ('PENDING', 'FAILED')`,
      );
      this.set(row.n);
    },
  });
  new Gauge({
    name: 'webhook_oldest_due_age_seconds',
    help: 'Age of the oldest delivery that is due now (0 when none)',
    registers: [registry],
    async collect() {
      const [row] = await db.sql.query<{ age: number | null }>(
        `SELECT EXTRACT(EPOCH FROM (now() - min("nextAttemptAt")))::float8 AS age FROM webhook_deliveries
         WHERE status IN ('PENDING', 'FAILED') AND "nextAttemptAt" <= now()`,
      );
      this.set(Math.max(0, row.age ?? 0));
    },
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (PostgreSQL only)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = db.poolStats();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'in_use' }, stats.total - stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
      this.set({ state: 'max' }, stats.max);
    },
  });
  if (db.replicas) registerReplicaMetrics(db.replicas, registry);

  return {
    registry,
    rateLimited: () => rateLimited.inc(),
    delivery: (outcome) => deliveries.inc({ outcome }),
    telematicsRun: (outcome, readings) => {
      telematicsRuns.inc({ outcome });
      telematicsReadings.inc({ result: 'created' }, readings.created);
      telematicsReadings.inc({ result: 'skipped' }, readings.skipped);
    },
    register: (app) => registerHttpMetrics(app, registry),
  };
}

/** Each replica's state and lag (as GET /health shows them), and where the reads went. */
function registerReplicaMetrics(replicas: ReplicaSet, registry: Registry) {
  const { Counter, Gauge } = promClient();
  new Gauge({
    name: 'db_replica_up',
    help: 'Whether the replica gets reads (1), or is left out: lagging or not answering (0)',
    labelNames: ['replica', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of replicas.status()) this.set({ replica: r.name, state: r.state }, r.state === 'healthy' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'db_replica_lag_seconds',
    help: 'Replica lag behind the primary by WAL position, in time (0 when it has replayed everything)',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of replicas.status()) if (r.lagMs !== null) this.set({ replica: r.name }, r.lagMs / 1000);
    },
  });
  new Gauge({
    name: 'db_replica_lag_bytes',
    help: 'WAL bytes the replica has not replayed yet',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of replicas.status()) if (r.lagBytes !== null) this.set({ replica: r.name }, r.lagBytes);
    },
  });
  new Counter({
    name: 'db_read_statements_total',
    help: 'Statements of read requests by where they ran: a replica, or the primary (no replica had the writes)',
    labelNames: ['target'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ target: 'replica' }, replicas.reads.replica);
      this.inc({ target: 'primary' }, replicas.reads.primary);
    },
  });
}

/** GET /metrics: absent (404) unless METRICS_TOKEN is set; then it requires that bearer token. */
export const metricsRoutes =
  (metrics: Metrics, token: string | undefined): FastifyPluginAsync =>
  async (app) => {
    if (!token || !metrics.registry) return;
    const registry = metrics.registry;
    const expected = Buffer.from(`Bearer ${token}`);
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return reply.code(401).send(errorBody('unauthorized', 'Send Authorization: Bearer <METRICS_TOKEN>'));
      }
      reply.type(registry.contentType);
      return registry.metrics();
    });
  };
