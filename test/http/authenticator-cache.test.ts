import { afterEach, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/http/authenticator.ts';
import { generateApiKey, hashApiKey } from '../../src/core/api-keys.ts';
import type { Database } from '../../src/db/database.ts';

/**
 * The authenticator's key cache against a fake database that counts its key lookups and can hold them: bounded
 * (least recently used out first), expiring after its TTL, one lookup for any number of concurrent requests with
 * the same uncached key, and revocation dropping the cached key at once.
 */
function fakeDb() {
  const rows = new Map<string, { id: string; revokedAt: Date | null }>();
  let gate: Promise<void> | null = null;
  const db = {
    lookups: 0,
    rows,
    hold() {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => {
        gate = null;
        open();
      };
    },
    issue() {
      const key = generateApiKey();
      const id = `key-${rows.size + 1}`;
      rows.set(hashApiKey(key), { id, revokedAt: null });
      return { key, id, header: `Bearer ${key}` };
    },
    sql: {
      async query(_text: string, [keyHash]: string[]) {
        db.lookups++;
        await gate;
        const row = rows.get(keyHash);
        if (!row) return [];
        const at = new Date(0);
        return [
          {
            ...row,
            orgId: 'org-1',
            label: 'test',
            scopes: ['assets:read'],
            rateLimitPerMinute: null,
            createdAt: at,
            expiresAt: null,
            lastUsedAt: null,
            orgName: 'Org',
            orgSlug: 'org',
            orgCreatedAt: at,
            creatorId: null,
            creatorName: null,
            creatorEmail: null,
            creatorRemovedAt: null,
          },
        ];
      },
    },
    prisma: { $executeRawUnsafe: async () => 0 },
  };
  return db;
}

const made: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const auth of made.splice(0)) await auth.close();
});
function authenticator(
  db: ReturnType<typeof fakeDb>,
  options: { ttlMs: number; maxEntries?: number; flushIntervalMs?: number },
) {
  const auth = createAuthenticator(db as unknown as Database, options);
  made.push(auth);
  return auth;
}

describe('the key cache', () => {
  it('answers a request whose lookup was in flight while the sweep deleted its entry', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 1, flushIntervalMs: 10 });
    const { header, id } = db.issue();
    const release = db.hold();
    const pending = auth.authenticate(header);
    // Several sweeps pass while the lookup waits on the database.
    await new Promise((r) => setTimeout(r, 60));
    release();
    expect((await pending).keyId).toBe(id);
  });

  it('asks the database once for any number of concurrent requests with the same new key', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 5_000 });
    const { header, id } = db.issue();
    const release = db.hold();
    const pending = Array.from({ length: 50 }, () => auth.authenticate(header));
    await new Promise((r) => setTimeout(r, 20));
    release();
    const keys = await Promise.all(pending);
    expect(keys.every((k) => k.keyId === id)).toBe(true);
    expect(db.lookups).toBe(1);
    // Cached from now on.
    await auth.authenticate(header);
    expect(auth.cachedKey(header, Date.now())?.keyId).toBe(id);
    expect(db.lookups).toBe(1);
  });

  it('asks once for concurrent requests with the same unknown key, then remembers it is unknown', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 5_000 });
    const header = `Bearer ${generateApiKey()}`;
    const release = db.hold();
    const pending = Array.from({ length: 20 }, () => auth.authenticate(header).catch((e: Error) => e.message));
    release();
    expect(new Set(await Promise.all(pending))).toEqual(new Set(['The API key is not known']));
    await expect(auth.authenticate(header)).rejects.toThrow('not known');
    expect(db.lookups).toBe(1);
  });

  it('keeps at most maxEntries keys, the least recently used going first', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 60_000, maxEntries: 2 });
    const [a, b, c] = [db.issue(), db.issue(), db.issue()];
    await auth.authenticate(a.header);
    await auth.authenticate(b.header);
    // Another spelling of a's header: looked up in the key cache by hash, which makes a the most recently used.
    await auth.authenticate(a.header.replace('Bearer', 'bearer'));
    await auth.authenticate(c.header); // evicts b
    expect(db.lookups).toBe(3);
    await auth.authenticate(a.header);
    expect(db.lookups).toBe(3);
    await auth.authenticate(b.header);
    expect(db.lookups).toBe(4);
  });

  it('looks a key up again once its TTL has passed', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 1_000 });
    const { header } = db.issue();
    const now = Date.now();
    await auth.authenticate(header, now);
    await auth.authenticate(header, now + 999);
    expect(db.lookups).toBe(1);
    expect(auth.cachedKey(header, now + 1_500)).toBeUndefined();
    await auth.authenticate(header, now + 1_500);
    expect(db.lookups).toBe(2);
  });

  it('with a TTL of 0 caches nothing, but concurrent requests still share one lookup', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 0 });
    const { header } = db.issue();
    const release = db.hold();
    const pending = [auth.authenticate(header), auth.authenticate(header)];
    release();
    await Promise.all(pending);
    expect(db.lookups).toBe(1);
    await auth.authenticate(header);
    expect(db.lookups).toBe(2);
  });

  it('drops a revoked key at once, also when its lookup was in flight during the revocation', async () => {
    const db = fakeDb();
    const auth = authenticator(db, { ttlMs: 60_000 });
    const { header, key, id } = db.issue();
    await auth.authenticate(header);
    db.rows.get(hashApiKey(key))!.revokedAt = new Date();
    await auth.authenticate(header); // cached: still valid until forgotten
    auth.forget({ keyIds: [id] });
    await expect(auth.authenticate(header)).rejects.toThrow('revoked');

    // A lookup that read the row before a revocation must not keep it cached past it.
    const other = db.issue();
    const release = db.hold();
    const inFlight = auth.authenticate(other.header);
    await new Promise((r) => setTimeout(r, 10));
    auth.forget({ keyIds: [other.id] });
    release();
    await inFlight;
    const before = db.lookups;
    await auth.authenticate(other.header);
    expect(db.lookups).toBe(before + 1);
  });
});
