import type { FastifyBaseLogger } from 'fastify';
import type { AuthenticatedKey, RateLimitState } from '../core/context.ts';
import { lazyModule } from '../core/lazy-module.ts';

// ioredis costs start-up time and memory to load, so only a process configured with REDIS_URL loads it.
const ioredis = lazyModule<typeof import('ioredis')>('ioredis');

export interface WindowCount {
  count: number;
  resetEpochSec: number;
}

/** Fixed one-minute windows aligned to the clock, counted per API key id. */
export interface RateLimitStore {
  hit(keyId: string, nowMs: number): Promise<WindowCount>;
  /** A store in this process counts synchronously (no promise per request); shared stores do not have it. */
  hitNow?(keyId: string, nowMs: number): WindowCount;
  peek(keyId: string, nowMs: number): Promise<WindowCount>;
  close(): Promise<void>;
}

export const WINDOW_SEC = 60;
const windowOf = (nowMs: number) => Math.floor(nowMs / (WINDOW_SEC * 1000));
const resetOf = (window: number) => (window + 1) * WINDOW_SEC;

export function createMemoryStore(): RateLimitStore {
  const counts = new Map<string, { window: number; count: number }>();
  const current = (keyId: string, window: number) => {
    const entry = counts.get(keyId);
    return entry && entry.window === window ? entry : { window, count: 0 };
  };
  const hitNow = (keyId: string, nowMs: number) => {
    const entry = current(keyId, windowOf(nowMs));
    entry.count += 1;
    counts.set(keyId, entry);
    return { count: entry.count, resetEpochSec: resetOf(entry.window) };
  };
  return {
    hitNow,
    async hit(keyId, nowMs) {
      return hitNow(keyId, nowMs);
    },
    async peek(keyId, nowMs) {
      const entry = current(keyId, windowOf(nowMs));
      return { count: entry.count, resetEpochSec: resetOf(entry.window) };
    },
    async close() {
      counts.clear();
    },
  };
}

/** Shared counters for several instances: INCR on a key that expires with its window. */
export function createRedisStore(url: string, commandTimeoutMs = 500): RateLimitStore {
  // Commands wait for the connection at most commandTimeout, then fail; the breaker then fails open.
  const { Redis } = ioredis();
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: commandTimeoutMs, connectTimeout: 2_000 });
  redis.on('error', () => {});
  const keyFor = (keyId: string, window: number) => `fleet:rl:${keyId}:${window}`;
  return {
    async hit(keyId, nowMs) {
      const window = windowOf(nowMs);
      const k = keyFor(keyId, window);
      const [[, count]] = (await redis
        .multi()
        .incr(k)
        .expire(k, WINDOW_SEC + 5)
        .exec()) as [[null, number], unknown];
      return { count, resetEpochSec: resetOf(window) };
    },
    async peek(keyId, nowMs) {
      const window = windowOf(nowMs);
      const count = Number((await redis.get(keyFor(keyId, window))) ?? 0);
      return { count, resetEpochSec: resetOf(window) };
    },
    async close() {
      redis.disconnect();
    },
  };
}

export class StoreUnavailableError extends Error {}

/**
 * Circuit breaker in front of a shared store. While it is down, requests skip it at once (the limiter
 * fails open) instead of each waiting for a timeout: an outage costs at most one probe (one timeout)
 * and one warning per interval. The first probe that succeeds closes the breaker, so the limit is back
 * within one interval of the store returning.
 */
export function withCircuitBreaker(
  store: RateLimitStore,
  options: { intervalMs: number; timeoutMs: number; log: FastifyBaseLogger; now?: () => number },
): RateLimitStore & { isOpen(): boolean } {
  const now = options.now ?? Date.now;
  let openUntil = 0; // 0 = closed
  let probing = false;
  let warnedAt = -Infinity;
  let skipped = 0;

  const deadline = <T>(promise: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };

  async function call<T>(fn: () => Promise<T>): Promise<T> {
    const t = now();
    if (openUntil !== 0 && (t < openUntil || probing)) {
      skipped += 1;
      throw new StoreUnavailableError('rate-limit store unavailable (circuit open)');
    }
    const probe = openUntil !== 0;
    probing = probe;
    try {
      const result = await deadline(fn());
      if (probe) options.log.info({ skipped }, 'rate-limit store is back; rate limits enforced again');
      openUntil = 0;
      skipped = 0;
      return result;
    } catch (err) {
      openUntil = now() + options.intervalMs;
      if (now() - warnedAt >= options.intervalMs) {
        warnedAt = now();
        options.log.warn(
          { reason: (err as Error)?.message, skipped, retryInMs: options.intervalMs },
          'rate-limit store unavailable; allowing requests without a limit until it is back',
        );
      }
      throw err instanceof StoreUnavailableError
        ? err
        : new StoreUnavailableError((err as Error)?.message ?? 'store failed');
    } finally {
      if (probe) probing = false;
    }
  }

  return {
    hit: (keyId, nowMs) => call(() => store.hit(keyId, nowMs)),
    peek: (keyId, nowMs) => call(() => store.peek(keyId, nowMs)),
    close: () => store.close(),
    isOpen: () => openUntil !== 0,
  };
}

/**
 * Per-key fixed-window limiter. The cap is the key's own (a commercial arrangement) or the default.
 * If the shared store (Redis) fails, requests are allowed (fail-open): an outage of the counter must not
 * take the API down with it. The store's circuit breaker keeps that outage cheap and its logging quiet.
 */
export function createRateLimiter(store: RateLimitStore, defaultLimit: number, log: FastifyBaseLogger) {
  const limitOf = (key: AuthenticatedKey) => key.rateLimitPerMinute ?? defaultLimit;
  const state = (limit: number, count: number, resetEpochSec: number): RateLimitState => ({
    limit,
    remaining: Math.max(0, limit - count),
    resetEpochSec,
    windowSec: WINDOW_SEC,
    limited: count > limit,
  });
  const fallback = (limit: number, nowMs: number) => state(limit, 0, (Math.floor(nowMs / 60_000) + 1) * 60);

  return {
    /** hit() when the store counts synchronously; undefined (nothing counted) when it does not. */
    hitNow(key: AuthenticatedKey, nowMs = Date.now()): RateLimitState | undefined {
      if (!store.hitNow) return undefined;
      const { count, resetEpochSec } = store.hitNow(key.keyId, nowMs);
      return state(limitOf(key), count, resetEpochSec);
    },
    async hit(key: AuthenticatedKey, nowMs = Date.now()): Promise<RateLimitState> {
      const limit = limitOf(key);
      try {
        const { count, resetEpochSec } = await store.hit(key.keyId, nowMs);
        return state(limit, count, resetEpochSec);
      } catch (err) {
        // The circuit breaker in front of a shared store has already logged the outage, once per interval.
        if (!(err instanceof StoreUnavailableError))
          log.error({ err, keyId: key.keyId }, 'rate-limit store failed; allowing request');
        return fallback(limit, nowMs);
      }
    },
    async peek(key: AuthenticatedKey, nowMs = Date.now()): Promise<RateLimitState> {
      const limit = limitOf(key);
      try {
        const { count, resetEpochSec } = await store.peek(key.keyId, nowMs);
        return state(limit, count, resetEpochSec);
      } catch {
        return fallback(limit, nowMs);
      }
    },
    close: () => store.close(),
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
