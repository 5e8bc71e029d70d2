import type { FastifyInstance } from 'fastify';
import { Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** The logger methods shutdown uses (pino's, Fastify's). */
interface ShutdownLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A shutdown step; it receives the signal that started the shutdown. */
type Step = [name: string, run: (signal: string) => Promise<unknown>];

/**
 * On SIGTERM or SIGINT, runs the steps in order (once, whatever signals follow) and exits 0, logging its start and
 * its end with each step's duration, so a slow stop says which part was slow. Past `timeoutMs` it gives up and
 * exits 1.
 */
export function exitOnSignals(log: ShutdownLog, timeoutMs: number, steps: Step[]): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const t0 = performance.now();
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error({ signal, durationMs: Math.round(performance.now() - t0) }, 'shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    force.unref();
    const durations: Record<string, number> = {};
    for (const [name, run] of steps) {
      const start = performance.now();
      await run(signal);
      durations[name] = Math.round(performance.now() - start);
    }
    clearTimeout(force);
    // pino writes stdout synchronously here, so this line is out before the process exits.
    log.info({ signal, durationMs: Math.round(performance.now() - t0), ...durations }, 'shutdown complete');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

export interface DrainOptions {
  /** The readiness route (its URL as registered), answered 503 during the drain. */
  readinessUrl: string;
  /** The body of that 503, in the route's own response shape. */
  notReady: () => Promise<object>;
}

/**
 * The first shutdown step behind a load balancer (docs/adr/0021-drain-without-health-checks.md). For `ms` the
 * server answers as usual, but readiness says 503. Then it stops listening, so the balancer meets a refused
 * connection, which it retries on another replica for any method; it answers what still comes on open connections
 * with `Connection: close`, and waits (at most `ms` again) for the balancer to close them all, including those it
 * keeps idle. It never closes an idle connection itself while waiting: the balancer may be sending a request on it.
 * Register before the server starts; `run` is the step.
 */
export function registerDrain(app: FastifyInstance, options: DrainOptions) {
  let notReady = false;
  let retiring = false;
  app.addHook('onRequest', (request, reply, done) => {
    if (!notReady) return done();
    if (retiring) reply.header('Connection', 'close');
    if (request.routeOptions.url !== options.readinessUrl) return done();
    options.notReady().then(
      (body) => void reply.code(503).send(body),
      (err: unknown) => done(err as Error),
    );
  });
  return {
    async run(ms: number): Promise<void> {
      if (ms <= 0) return;
      notReady = true;
      await sleep(ms);
      // Stop listening just after the event loop has accepted what the kernel held (the poll phase runs before
      // setImmediate's): a connection still queued would be reset along with a request it may already carry.
      // net's close, not http's: http's also closes idle connections, among them ones just accepted.
      await new Promise((resolve) => setImmediate(resolve));
      retiring = true;
      const closed = new Promise<void>((resolve) => Server.prototype.close.call(app.server, () => resolve()));
      const cap = new AbortController();
      await Promise.race([closed, sleep(ms, undefined, { signal: cap.signal }).catch(() => {})]);
      cap.abort();
    },
  };
}
