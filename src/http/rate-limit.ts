import type { FastifyBaseLogger } from 'fastify';
import type { AuthenticatedKey, RateLimitState } from './context.ts';
import { StoreUnavailableError, WINDOW_SEC, type RateLimitStore } from './rate-limiter.ts';

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
    async hit(key: AuthenticatedKey, nowMs = Date.now()): Promise<RateLimitState> {
      const limit = limitOf(key);
      try {
        const { count, resetEpochSec } = await store.hit(key.keyId, nowMs);
        return state(limit, count, resetEpochSec);
      } catch (err) {
        // The circuit breaker in front of a shared store has already logged the outage, once per interval.
        if (!(err instanceof StoreUnavailableError)) log.error({ err, keyId: key.keyId }, 'rate-limit store failed; allowing request');
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
