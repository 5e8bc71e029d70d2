/** The logger methods shutdown uses (pino's, Fastify's). */
interface ShutdownLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * On SIGTERM or SIGINT, runs the steps in order (once, whatever signals follow) and exits 0, logging its start and
 * its end with each step's duration, so a slow stop says which part was slow. Past `timeoutMs` it gives up and
 * exits 1. Shared by the API server and the load balancer.
 */
export function exitOnSignals(
  log: ShutdownLog,
  timeoutMs: number,
  steps: [name: string, run: () => Promise<unknown>][],
): void {
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
      await run();
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
