import { ConfigError, loadProxyConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { startProxy } from './proxy.ts';
import { exitOnSignals } from '../core/shutdown.ts';
import { keepTickObjectShape } from '../core/tick-shape.ts';

// Entry point of the load balancer in front of the replicas: `node dist/proxy/main.js` (see proxy.ts).
async function main() {
  // Every proxied request passes through nextTick too: see tick-shape.ts.
  keepTickObjectShape();
  const config = loadProxyConfig();
  const log = createLogger(config.logLevel);
  const proxy = await startProxy(config, log);
  exitOnSignals(log, config.shutdownTimeoutMs, [['proxyMs', () => proxy.close()]]);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `fleet proxy failed to start: ${err}`);
  process.exit(1);
});
