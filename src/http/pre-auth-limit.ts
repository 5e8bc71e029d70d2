import { ApiError } from '../core/errors.ts';

const WINDOW_MS = 60_000;
// Bounded memory under a flood from many addresses: past this many, the window's table starts over.
const MAX_ADDRESSES = 100_000;

/**
 * Per client address, fixed one-minute windows, in this process: how many authentications may need the
 * database (keys neither verified nor refused in the last AUTH_CACHE_TTL_MS). Requests by cached keys
 * cost nothing and are not counted, so legitimate clients never meet this limit, while a flood of
 * made-up keys costs at most `perMinute` lookups per address. 0 disables it.
 */
export function createPreAuthLimiter(perMinute: number) {
  let window = -1;
  const counts = new Map<string, number>();
  return {
    /** Counts one database lookup for `address`; throws 429 rate_limited when over the limit. */
    take(address: string, nowMs = Date.now()): void {
      if (perMinute <= 0) return;
      const current = Math.floor(nowMs / WINDOW_MS);
      if (current !== window || counts.size >= MAX_ADDRESSES) {
        window = current;
        counts.clear();
      }
      const count = (counts.get(address) ?? 0) + 1;
      counts.set(address, count);
      if (count > perMinute) {
        const retryAfterSec = Math.max(1, Math.ceil(((current + 1) * WINDOW_MS - nowMs) / 1000));
        throw new ApiError(
          429,
          'rate_limited',
          `Too many authentication attempts from this address; retry in ${retryAfterSec} s`,
          {
            retryAfterSec,
          },
        );
      }
    },
  };
}

export type PreAuthLimiter = ReturnType<typeof createPreAuthLimiter>;
