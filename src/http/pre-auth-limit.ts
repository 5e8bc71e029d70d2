import { ApiError } from '../core/errors.ts';

const WINDOW_MS = 60_000;
// Bounded memory under a flood from many addresses: past this many, the window's table starts over.
const MAX_ADDRESSES = 100_000;
// A flood costs at most one reload of the active keys' hashes per this interval, process-wide.
const RELOAD_INTERVAL_MS = 1_000;

/** What the authenticator tells the limiter around one database lookup of a key hash. */
export interface LookupGuard {
  /** Before the lookup; resolves to let it run, throws 429 rate_limited to refuse it. */
  before(hash: string): Promise<void> | void;
  /** After it: `valid` when the key exists and is neither revoked nor expired. */
  after(hash: string, valid: boolean): void;
}

/**
 * Hashes of the active keys, as 52-bit prefixes (a made-up key matches one with odds of about keys / 2^52): loaded
 * from the database only when an address is over its limit, at most once per RELOAD_INTERVAL_MS, so a valid key
 * presented from a flooding address is still let through without a lookup per flooding request.
 */
function createActiveKeys(load: () => Promise<string[]>) {
  const prefix = (hash: string) => Number.parseInt(hash.slice(0, 13), 16);
  let prefixes = new Set<number>();
  let lastStart = -Infinity;
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  async function reload() {
    await running?.catch(() => {});
    const wait = lastStart + RELOAD_INTERVAL_MS - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    queued = undefined;
    lastStart = Date.now();
    running = load().then((hashes) => {
      prefixes = new Set(hashes.map(prefix));
    });
    try {
      await running;
    } finally {
      running = undefined;
    }
  }

  return {
    has: (hash: string) => prefixes.has(prefix(hash)),
    add: (hash: string) => void prefixes.add(prefix(hash)),
    remove: (hash: string) => void prefixes.delete(prefix(hash)),
    /** Resolves once a reload that started at or after `sinceMs` has completed (a key issued before then is in). */
    reloadedSince(sinceMs: number): Promise<void> {
      if (running && lastStart >= sinceMs) return running;
      return (queued ??= reload());
    },
  };
}

/**
 * Per client address, fixed one-minute windows, in this process: how many key lookups may find no usable key
 * (unknown, revoked or expired). Lookups of valid keys (first verifications and re-verifications after
 * AUTH_CACHE_TTL_MS) are never counted, and an address over the limit still gets its valid keys through: their
 * hashes are checked against the active keys (see createActiveKeys) instead of the database. 0 disables it.
 */
export function createPreAuthLimiter(perMinute: number, loadActiveKeyHashes: () => Promise<string[]>) {
  let window = -1;
  // Failed lookups, plus lookups in flight (a valid one gives its slot back), so concurrency cannot overshoot.
  const counts = new Map<string, number>();
  const active = createActiveKeys(loadActiveKeyHashes);

  function rollWindow(nowMs: number): number {
    const current = Math.floor(nowMs / WINDOW_MS);
    if (current !== window || counts.size >= MAX_ADDRESSES) {
      window = current;
      counts.clear();
    }
    return current;
  }

  function refused(current: number, nowMs: number): ApiError {
    const retryAfterSec = Math.max(1, Math.ceil(((current + 1) * WINDOW_MS - nowMs) / 1000));
    return new ApiError(
      429,
      'rate_limited',
      `Too many authentication attempts from this address; retry in ${retryAfterSec} s`,
      { retryAfterSec },
    );
  }

  return {
    /** The guard for one request from `address`. */
    guard(address: string): LookupGuard | undefined {
      if (perMinute <= 0) return undefined;
      let heldIn = -1;
      return {
        before(hash) {
          const nowMs = Date.now();
          const current = rollWindow(nowMs);
          const count = counts.get(address) ?? 0;
          if (count < perMinute) {
            counts.set(address, count + 1);
            heldIn = current;
            return;
          }
          if (active.has(hash)) return;
          return active.reloadedSince(nowMs).then(
            () => {
              if (!active.has(hash)) throw refused(current, Date.now());
            },
            () => {
              throw refused(current, Date.now());
            },
          );
        },
        after(hash, valid) {
          // A revoked or expired key is looked up again only after a reload shows it active.
          if (!valid) return active.remove(hash);
          active.add(hash);
          if (heldIn !== window) return;
          const count = counts.get(address) ?? 0;
          if (count > 0) counts.set(address, count - 1);
        },
      };
    },
  };
}

export type PreAuthLimiter = ReturnType<typeof createPreAuthLimiter>;
