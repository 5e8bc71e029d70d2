import { createRequire } from 'node:module';

// ioredis costs ~100 ms and ~20 MB RSS to load, so only a process configured with REDIS_URL loads it.
const requireLazily = createRequire(import.meta.url);

export interface WindowCount {
  count: number;
  resetEpochSec: number;
}

/** Fixed one-minute windows aligned to the clock, counted per API key id. */
export interface RateLimitStore {
  hit(keyId: string, nowMs: number): Promise<WindowCount>;
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
  return {
    async hit(keyId, nowMs) {
      const entry = current(keyId, windowOf(nowMs));
      entry.count += 1;
      counts.set(keyId, entry);
      return { count: entry.count, resetEpochSec: resetOf(entry.window) };
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
export function createRedisStore(url: string): RateLimitStore {
  // Commands wait for the connection at most commandTimeout, then fail; the limiter then fails open.
  const { Redis } = requireLazily('ioredis') as typeof import('ioredis');
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 500, connectTimeout: 2_000 });
  redis.on('error', () => {});
  const keyFor = (keyId: string, window: number) => `fleet:rl:${keyId}:${window}`;
  return {
    async hit(keyId, nowMs) {
      const window = windowOf(nowMs);
      const k = keyFor(keyId, window);
      const [[, count]] = (await redis.multi().incr(k).expire(k, WINDOW_SEC + 5).exec()) as [[null, number], unknown];
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
