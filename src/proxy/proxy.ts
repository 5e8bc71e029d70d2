import { createServer, Agent } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { ProxyConfig } from '../config.ts';
import { createForwarder } from './forward.ts';
import { createUpstreams } from './upstreams.ts';

/**
 * The single address in front of the API's replicas (`node dist/proxy/main.js`, the `proxy` service of the
 * Compose file): health-aware round robin over every address of PROXY_UPSTREAM, X-Forwarded-For rebuilt for
 * the API's TRUST_PROXY, connect and response timeouts.
 */
export async function startProxy(config: ProxyConfig, log: FastifyBaseLogger) {
  // Kept-alive connections to the replicas, closed here before the API's own keep-alive timeout (72 s) could.
  const agent = new Agent({ keepAlive: true, timeout: 30_000, maxSockets: 256 });
  const upstreams = createUpstreams({
    targets: config.upstreams,
    healthPath: config.healthPath,
    intervalMs: config.healthIntervalMs,
    agent,
    log,
  });
  await upstreams.start();
  const handle = createForwarder({
    upstreams,
    agent,
    log,
    connectTimeoutMs: config.connectTimeoutMs,
    responseTimeoutMs: config.responseTimeoutMs,
    trustProxy: config.trustProxy,
  });
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info(
    {
      port,
      upstreams: config.upstreams.map((u) => `${u.host}:${u.port}`),
      ready: upstreams.list().filter((b) => b.healthy).length,
    },
    'fleet proxy ready',
  );
  return {
    port,
    upstreams,
    /** Stops accepting, lets requests in flight finish, closes idle connections. */
    async close() {
      upstreams.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      agent.destroy();
    },
  };
}
