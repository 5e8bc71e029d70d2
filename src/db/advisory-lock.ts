// The migration lock on PostgreSQL: a transaction-scoped advisory lock, waited for with a bound and a report of
// who holds it. Transaction-scoped so that it holds behind a transaction pooler too (see database.ts).
import type pg from 'pg';

export interface LockWaitOptions {
  /** Longest wait for a lock someone else holds; then withExclusiveLock rejects with LockWaitTimeoutError. */
  waitMs?: number;
  /** Called when the lock is found taken, then every 10 s while waiting: who holds it, when known. */
  onWait?: (info: { waitedMs: number; holder: string | null }) => void;
}

export class LockWaitTimeoutError extends Error {}

/**
 * A direct connection reports the server process that serves it in its start-up (BackendKeyData); a pooler
 * (PgBouncer, RDS Proxy…) hands out keys of its own, so the two differ there.
 */
export async function isDirectSession(conn: pg.Client): Promise<boolean> {
  const [row] = (await conn.query('SELECT pg_backend_pid() AS pid')).rows as { pid: number }[];
  return row.pid === (conn as unknown as { processID?: number }).processID;
}

function key(lockId: number): string {
  if (!Number.isSafeInteger(lockId)) throw new TypeError(`lock id ${lockId} is not an integer`);
  return String(lockId);
}

const LOCK_POLL_MS = 500;
const LOCK_REPORT_EVERY_MS = 10_000;

/** Polls for the advisory lock in conn's open transaction, reporting who holds it, for at most options.waitMs. */
export async function waitForXactLock(conn: pg.Client, lockId: number, options: LockWaitOptions): Promise<void> {
  const started = Date.now();
  let reportAt = 0;
  for (;;) {
    // Simple-protocol queries only (the key written literally): after an extended-protocol query the session keeps
    // a snapshot (its xmin) while idle in the transaction, and CREATE INDEX CONCURRENTLY waits for every older one.
    const [row] = (await conn.query(`SELECT pg_try_advisory_xact_lock(${key(lockId)}) AS ok`)).rows as {
      ok: boolean;
    }[];
    if (row.ok) return;
    const waitedMs = Date.now() - started;
    if (waitedMs >= reportAt || waitedMs >= (options.waitMs ?? Infinity)) {
      const holder = await lockHolder(conn, lockId).catch(() => null);
      if (waitedMs >= (options.waitMs ?? Infinity)) {
        throw new LockWaitTimeoutError(
          `lock ${lockId} not acquired in ${Math.round(waitedMs / 1000)} s; held by ${holder ?? 'an unknown session'}`,
        );
      }
      options.onWait?.({ waitedMs, holder });
      reportAt = waitedMs + LOCK_REPORT_EVERY_MS;
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(LOCK_POLL_MS, (options.waitMs ?? Infinity) - waitedMs)),
    );
  }
}

/** The session holding an advisory lock on a key below 2^32 (classid 0, objid the key, objsubid 1). */
async function lockHolder(conn: pg.Client, lockId: number): Promise<string | null> {
  const [row] = (
    await conn.query(
      `SELECT a.pid, a.application_name AS app, a.client_addr::text AS addr, a.xact_start AS since
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid::bigint = ${key(lockId)} AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        LIMIT 1`,
    )
  ).rows as { pid: number; app: string; addr: string | null; since: Date | null }[];
  if (!row) return null;
  const parts = [row.app && `application "${row.app}"`, row.addr && `client ${row.addr}`];
  if (row.since) parts.push(`in a transaction since ${new Date(row.since).toISOString()}`);
  return `server process ${row.pid}${parts.some(Boolean) ? ` (${parts.filter(Boolean).join(', ')})` : ''}`;
}
