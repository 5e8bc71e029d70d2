import { lookup } from 'node:dns/promises';
import { request, type Agent } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';

/** One replica: an address behind an upstream name (Compose gives every replica of `api` that name). */
export interface Backend {
  readonly key: string;
  readonly address: string;
  readonly port: number;
  healthy: boolean;
}

export interface UpstreamOptions {
  targets: { host: string; port: number }[];
  healthPath: string;
  intervalMs: number;
  agent: Agent;
  log: FastifyBaseLogger;
}

// The API's readiness answers within its 2 s database ping; a probe still open after this counts as down.
const PROBE_TIMEOUT_MS = 5_000;
// While no replica is ready (start-up, all restarting) probes come this often, so the first ready replica
// serves within a second rather than within a full interval.
const EAGER_INTERVAL_MS = 1_000;

/**
 * The replicas and their health: every interval the upstream names are resolved again (replicas added,
 * replaced or removed) and every replica is probed on the API's readiness path. Requests go round robin
 * over the healthy ones; a replica that refuses a connection is taken out at once (markDown) and comes back
 * with its next passing probe. State changes are logged, probes are not.
 */
export function createUpstreams(opts: UpstreamOptions) {
  const backends = new Map<string, Backend>();
  let turn = 0;
  let timer: NodeJS.Timeout | undefined;
  let refreshing: Promise<void> | undefined;
  const resolveErrors = new Map<string, string>();

  const setHealth = (backend: Backend, healthy: boolean, reason?: string) => {
    if (backend.healthy === healthy) return;
    backend.healthy = healthy;
    if (healthy) opts.log.info({ upstream: backend.key }, 'upstream up');
    else opts.log.warn({ upstream: backend.key, reason }, 'upstream down');
  };

  const probe = (backend: Backend) =>
    new Promise<void>((resolve) => {
      const req = request(
        {
          host: backend.address,
          port: backend.port,
          path: opts.healthPath,
          agent: opts.agent,
          timeout: PROBE_TIMEOUT_MS,
          headers: { 'user-agent': 'fleet-proxy-health' },
        },
        (res) => {
          res.resume();
          res.once('end', resolve);
          res.once('error', () => resolve());
          setHealth(backend, res.statusCode === 200, `readiness answered ${res.statusCode}`);
        },
      );
      req.once('timeout', () => req.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
      req.once('error', (err) => {
        setHealth(backend, false, err.message);
        resolve();
      });
      req.end();
    });

  async function resolveTargets(): Promise<Map<string, { address: string; port: number }> | undefined> {
    const found = new Map<string, { address: string; port: number }>();
    let failed = false;
    for (const { host, port } of opts.targets) {
      try {
        for (const { address, family } of await lookup(host, { all: true })) {
          found.set(family === 6 ? `[${address}]:${port}` : `${address}:${port}`, { address, port });
        }
        resolveErrors.delete(host);
      } catch (err) {
        // Logged once per change: a scaled-to-zero service does not flood the log.
        const message = (err as Error).message;
        if (resolveErrors.get(host) !== message) opts.log.warn({ host, err: message }, 'upstream name not resolved');
        resolveErrors.set(host, message);
        failed = true;
      }
    }
    // A failed lookup keeps the replicas we know (their probes decide); only a full answer removes any.
    return failed && found.size === 0 ? undefined : found;
  }

  async function refresh() {
    const found = await resolveTargets();
    if (found) {
      for (const [key, target] of found) {
        if (!backends.has(key)) {
          backends.set(key, { key, ...target, healthy: false });
          opts.log.info({ upstream: key }, 'upstream added');
        }
      }
      for (const key of [...backends.keys()]) {
        if (!found.has(key)) {
          backends.delete(key);
          opts.log.info({ upstream: key }, 'upstream removed');
        }
      }
    }
    await Promise.all([...backends.values()].map(probe));
  }

  const tick = () => {
    refreshing ??= refresh().finally(() => (refreshing = undefined));
    return refreshing;
  };

  return {
    /** Resolves and probes once, then keeps doing so every interval (every second while none is ready). */
    async start() {
      await tick();
      const schedule = () => {
        const ready = [...backends.values()].some((b) => b.healthy);
        const wait = ready ? opts.intervalMs : Math.min(opts.intervalMs, EAGER_INTERVAL_MS);
        timer = setTimeout(() => void tick().then(() => timer && schedule()), wait);
      };
      schedule();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
    refresh: tick,
    /** The next healthy replica in turn, skipping those this request already tried. */
    next(exclude: ReadonlySet<Backend> = new Set()): Backend | undefined {
      const healthy = [...backends.values()].filter((b) => b.healthy && !exclude.has(b));
      if (!healthy.length) return undefined;
      return healthy[turn++ % healthy.length];
    },
    markDown(backend: Backend, reason: string) {
      setHealth(backend, false, reason);
    },
    list(): readonly Backend[] {
      return [...backends.values()];
    },
  };
}

export type Upstreams = ReturnType<typeof createUpstreams>;
