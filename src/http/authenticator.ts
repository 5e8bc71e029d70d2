import { LRUCache } from 'lru-cache';
import type { Database } from '../db/database.ts';
import { runHooks } from '../db/transaction.ts';
import type { AuthenticatedKey, Scope } from '../core/context.ts';
import { SCOPES } from '../core/context.ts';
import { ApiError, type CodeOf } from '../core/errors.ts';
import { hashApiKey, isWellFormedKey } from '../core/api-keys.ts';
import type { LookupGuard } from './pre-auth-limit.ts';

const unauthorized = (code: CodeOf<401>, message: string) => new ApiError(401, code, message);

/** Verified keys, unknown hashes and header spellings each kept at most (the least recently used go first). */
const CACHE_MAX = 10_000;
/** Active keys' hashes the pre-auth limiter keeps for an address over its limit (a few MB at most). */
const ACTIVE_MAX = 200_000;

/**
 * A key with its organisation and issuing user in one prepared statement: with many keys in use, every key is
 * re-read once per TTL, so this runs often (two Prisma queries per lookup were a large share of the CPU).
 */
const KEY_LOOKUP_SQL = `SELECT k.id, k."orgId", k.label, k.scopes, k."rateLimitPerMinute", k."createdAt", k."expiresAt",
    k."revokedAt", k."lastUsedAt", o.name AS "orgName", o.slug AS "orgSlug", o."createdAt" AS "orgCreatedAt",
    u.id AS "creatorId", u.name AS "creatorName", u.email AS "creatorEmail", u."removedAt" AS "creatorRemovedAt"
  FROM api_keys k JOIN organizations o ON o.id = k."orgId" LEFT JOIN users u ON u.id = k."createdById"
  WHERE k."keyHash" = $1`;

interface KeyRow {
  id: string;
  orgId: string;
  label: string;
  scopes: string[];
  rateLimitPerMinute: number | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  orgName: string;
  orgSlug: string;
  orgCreatedAt: Date;
  creatorId: string | null;
  creatorName: string | null;
  creatorEmail: string | null;
  creatorRemovedAt: Date | null;
}

interface Entry {
  key: AuthenticatedKey;
  until: number;
}

/**
 * Resolves bearer tokens to keys. Verified keys are cached for `ttlMs` so authentication costs no
 * database round trip on most requests; a revocation, expiry change or user removal therefore takes
 * effect within `ttlMs` (5 s by default). Concurrent requests with the same uncached key share one lookup.
 * `lastUsedAt` is recorded in memory and flushed in bulk.
 */
export function createAuthenticator(
  db: Database,
  options: { ttlMs: number; flushIntervalMs?: number; maxEntries?: number },
) {
  const max = options.maxEntries ?? CACHE_MAX;
  // The caches' own TTL bounds memory; whether an entry still stands is `until` against the caller's clock.
  const bounds = { max, ttl: Math.max(1, options.ttlMs) };
  const lru = <V extends object | number>() => new LRUCache<string, V>(bounds);
  // Unknown hashes are remembered too, so a flood of made-up keys cannot turn into a flood of queries.
  const unknown = lru<number>();
  // Bumped by forget(): a lookup that was in flight meanwhile may have read the row before the change.
  let generation = 0;
  const cache = new LRUCache<string, Entry>({
    ...bounds,
    // The sweep and forget() delete entries whose lookup may be in flight; the requests waiting for it still get
    // its answer (lru-cache would otherwise reject them with "deleted", a 500).
    ignoreFetchAbort: true,
    // fetch() runs this once per hash however many requests wait for it; undefined: unknown, nothing cached.
    fetchMethod: async (hash) => {
      const started = generation;
      const key = await load(hash);
      const until = started === generation ? Date.now() + options.ttlMs : 0;
      if (!key) {
        if (options.ttlMs > 0) unknown.set(hash, until);
        return undefined;
      }
      unknown.delete(hash);
      return { key, until };
    },
  });
  // The same entries by the Authorization header that presented them.
  const byHeader = lru<Entry>();
  // Milliseconds: a Date is made only when a use is read or flushed, not on every request.
  const pendingLastUsed = new Map<string, number>();
  const knownScopes = new Set<string>(SCOPES);

  async function load(hash: string): Promise<AuthenticatedKey | null> {
    const [row] = await db.sql.query<KeyRow>(KEY_LOOKUP_SQL, [hash], 'auth_key_lookup');
    if (!row) return null;
    return {
      keyId: row.id,
      orgId: row.orgId,
      label: row.label,
      scopes: row.scopes.filter((s): s is Scope => knownScopes.has(s)),
      rateLimitPerMinute: row.rateLimitPerMinute,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      revokedAt: row.revokedAt,
      lastUsedAt: row.lastUsedAt,
      org: { id: row.orgId, name: row.orgName, slug: row.orgSlug, createdAt: row.orgCreatedAt },
      creator:
        row.creatorId !== null
          ? {
              id: row.creatorId,
              name: row.creatorName,
              email: row.creatorEmail!,
              removed: row.creatorRemovedAt !== null,
            }
          : null,
    };
  }

  /**
   * `guard` is told of each database lookup (not cached either way): before it (it may refuse with 429) and after
   * it, whether the key turned out usable. A header seen within the TTL is answered from `byHeader` without parsing
   * or hashing it again; the plaintext stays there no longer than the TTL after its last use (the sweep drops it),
   * as it arrives with every request anyway.
   */
  async function authenticate(
    authorization: string | undefined,
    now: Date | number = Date.now(),
    guard?: LookupGuard,
  ): Promise<AuthenticatedKey> {
    const nowMs = typeof now === 'number' ? now : now.getTime();
    const cached = cachedKey(authorization, nowMs);
    if (cached) return cached;
    const { entry, hash } = await lookup(authorization, nowMs, guard);
    if (!hash || !guard) return accept(entry.key, nowMs);
    let key: AuthenticatedKey;
    try {
      key = accept(entry.key, nowMs);
    } catch (err) {
      guard.after(hash, false);
      throw err;
    }
    guard.after(hash, true);
    return key;
  }

  /** authenticate() for a header seen within the TTL, synchronously; undefined when it must be looked up. */
  function cachedKey(authorization: string | undefined, nowMs: number): AuthenticatedKey | undefined {
    const entry = authorization === undefined ? undefined : byHeader.get(authorization);
    return entry && entry.until > nowMs ? accept(entry.key, nowMs) : undefined;
  }

  function accept(key: AuthenticatedKey, nowMs: number): AuthenticatedKey {
    if (key.revokedAt) throw unauthorized('revoked', 'The API key has been revoked');
    if (key.expiresAt && key.expiresAt.getTime() <= nowMs) throw unauthorized('expired', 'The API key has expired');
    pendingLastUsed.set(key.keyId, nowMs);
    return key;
  }

  /** The key's entry, and its hash when the database was asked for it. */
  async function lookup(authorization: string | undefined, nowMs: number, guard?: LookupGuard) {
    const match = /^Bearer(?:\s+(.*))?$/i.exec(authorization?.trim() ?? '');
    if (!match) throw unauthorized('missing_bearer', 'Send the header "Authorization: Bearer <API key>"');
    const token = (match[1] ?? '').trim();
    if (!isWellFormedKey(token))
      throw unauthorized('malformed_token', 'The bearer token is not an API key of this service');
    const hash = hashApiKey(token);
    let entry = cache.get(hash);
    let looked = false;
    if (!entry || entry.until <= nowMs) {
      if ((unknown.get(hash) ?? 0) > nowMs) throw unauthorized('unknown_token', 'The API key is not known');
      await guard?.before(hash);
      looked = true;
      // A cached entry past the caller's clock is looked up again (forceRefresh); one in flight is joined.
      entry = await cache.fetch(hash, { forceRefresh: entry !== undefined });
      if (!entry) {
        guard?.after(hash, false);
        throw unauthorized('unknown_token', 'The API key is not known');
      }
    }
    if (options.ttlMs > 0 && authorization !== undefined && entry.until > nowMs) byHeader.set(authorization, entry);
    return { entry, hash: looked ? hash : undefined };
  }

  /**
   * Hashes of the keys neither revoked nor expired, the most recently used first, at most ACTIVE_MAX: what the
   * pre-auth limiter checks instead of a lookup per request for an address over its limit.
   */
  async function activeKeyHashes(): Promise<string[]> {
    const rows = await db.prisma.$queryRawUnsafe<{ keyHash: string }[]>(
      `SELECT "keyHash" FROM api_keys WHERE "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > now())
       ORDER BY "lastUsedAt" DESC NULLS LAST LIMIT ${ACTIVE_MAX}`,
    );
    return rows.map((r) => r.keyHash);
  }

  /** The newest use of a key known to this process (the database may be up to one flush behind). */
  function lastUsedAt(key: AuthenticatedKey): Date | null {
    const pending = pendingLastUsed.get(key.keyId);
    return pending === undefined ? key.lastUsedAt : new Date(pending);
  }

  /** lastUsedAt() in milliseconds since the epoch, without making a Date. */
  function lastUsedMs(key: AuthenticatedKey): number | null {
    return pendingLastUsed.get(key.keyId) ?? key.lastUsedAt?.getTime() ?? null;
  }

  /** The newest use of a key by id, for listings that read it from the database. */
  function lastUsedAtOf(keyId: string, stored: Date | null): Date | null {
    const pending = pendingLastUsed.get(keyId);
    return pending !== undefined && (!stored || pending > stored.getTime()) ? new Date(pending) : stored;
  }

  /**
   * Drops cached keys at once (revocation, removal of their user) so this process does not wait out the
   * TTL; other processes still see the change within it.
   */
  function forget(match: { keyIds?: readonly string[]; creatorId?: string }): void {
    const drop = () => {
      generation++;
      for (const map of [cache, byHeader]) {
        const stale: string[] = [];
        for (const [k, entry] of map.entries())
          if (match.keyIds?.includes(entry.key.keyId) || (match.creatorId && entry.key.creator?.id === match.creatorId))
            stale.push(k);
        for (const k of stale) map.delete(k);
      }
    };
    drop();
    // Inside an idempotent request the change commits only when the request's transaction does: a request in
    // between would cache the key as still valid from the committed row, so drop it again after that commit.
    runHooks([drop]);
  }

  async function flushLastUsed(): Promise<void> {
    if (pendingLastUsed.size === 0) return;
    const batch = [...pendingLastUsed.entries()];
    pendingLastUsed.clear();
    await db.prisma.$executeRawUnsafe(
      `UPDATE api_keys AS k SET "lastUsedAt" = GREATEST(COALESCE(k."lastUsedAt", v.at), v.at)
       FROM (SELECT unnest($1::text[]) AS id, unnest($2::timestamptz[]) AS at) AS v WHERE k.id = v.id`,
      batch.map(([id]) => id),
      batch.map(([, at]) => new Date(at).toISOString()),
    );
  }

  const timer = setInterval(() => {
    flushLastUsed().catch(() => {});
    // Expired entries are dropped lazily on access; sweep the rest, so no plaintext header outlives its TTL long.
    for (const map of [cache, byHeader, unknown]) map.purgeStale();
  }, options.flushIntervalMs ?? 5_000);
  timer.unref();

  return {
    authenticate,
    activeKeyHashes,
    cachedKey,
    lastUsedAt,
    lastUsedMs,
    lastUsedAtOf,
    forget,
    flushLastUsed,
    clearCache: () => {
      cache.clear();
      byHeader.clear();
      unknown.clear();
    },
    async close() {
      clearInterval(timer);
      await flushLastUsed().catch(() => {});
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
