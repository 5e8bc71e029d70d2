import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, loadProxyConfig } from '../config.ts';
import { loggerOptions } from '../logger.ts';
import { startProxy } from './proxy.ts';

// Entry point of the load balancer in front of the replicas: `node dist/proxy/main.js` (see proxy.ts).
async function main() {
  const config = loadProxyConfig();
  const log = pino(loggerOptions(config.logLevel) as pino.LoggerOptions) as unknown as FastifyBaseLogger;
  const proxy = await startProxy(config, log);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const t0 = performance.now();
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error({ signal, durationMs: Math.round(performance.now() - t0) }, 'shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    await proxy.close();
    clearTimeout(force);
    log.info({ signal, durationMs: Math.round(performance.now() - t0) }, 'shutdown complete');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `fleet proxy failed to start: ${err}`);
  process.exit(1);
});
