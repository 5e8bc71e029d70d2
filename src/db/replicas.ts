import type pg from 'pg';
import type { ReadScope, ReplicaTarget } from './read-scope.ts';
import { parseLsn } from './wal-position.ts';
import type { WritePositions } from './write-positions.ts';

/** How often each replica's replay position and lag are read: a lagging or silent one is left out within 1 s. */
export const REPLICA_CHECK_MS = 500;
/** A check (or an on-demand position read) not answered within this counts as a failure. */
const CHECK_TIMEOUT_MS = 400;

export interface ReplicaStatus {
  /** host:port/database of the replica (never its credentials). */
  name: string;
  /** healthy: reads go to it; lagging: further behind than REPLICA_MAX_LAG_MS; down: not answering. */
  state: 'healthy' | 'lagging' | 'down' | 'starting';
  lagMs: number | null;
  lagBytes: number | null;
}

export interface ReplicaSet {
  /** The replica a read scope's statements go to, or null for the primary (chosen once per scope). */
  target(scope: ReadScope): Promise<ReplicaTarget | null>;
  /** A read that failed on a replica (connection lost, conflict with recovery): the replica is re-checked. */
  failed(target: ReplicaTarget, err: unknown): void;
  /** After an organisation's write committed: reads of it wait for a replica that has replayed it. */
  noteWrite(orgId: string): Promise<void>;
  /** The same after background work committed for several organisations (one position for all). */
  noteWrites(orgIds: Iterable<string>): Promise<void>;
  status(): ReplicaStatus[];
  /** Reads routed since start, by where they went. */
  readonly reads: { replica: number; primary: number };
  close(): Promise<void>;
}

interface Replica {
  name: string;
  pool: pg.Pool;
  checker: pg.Pool;
  state: ReplicaStatus['state'];
  replay: bigint;
  lagMs: number | null;
  lagBytes: number | null;
  probing: Promise<bigint | null> | null;
  target: ReplicaTarget;
}

export interface ReplicaSetOptions {
  urls: string[];
  maxLagMs: number;
  positions: WritePositions;
  /** The primary's pool (never routed to a replica). */
  primary: pg.Pool;
  /** A connection of its own to the primary for the checks: a busy request pool must not make replicas look lagging. */
  primaryChecker: pg.Pool;
  makePool(url: string, kind: 'reads' | 'checks'): pg.Pool;
  /** Pool.query arguments run on one connection of `pool` in the caller's async context (ambient-engines.ts). */
  runOn(pool: pg.Pool, args: unknown[]): Promise<unknown>;
  onError?(message: string, err: unknown): void;
}

export function describeReplica(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'replica';
  }
}

/** Runs a statement with a deadline: a replica that does not answer is treated as down. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Streaming replicas for reads that tolerate lag, with read-your-writes: docs/adr/0070-read-replicas.md. Lag is
 * measured by WAL position: a replica that has replayed the primary's current position has no lag, however long
 * ago its last transaction was; one that is behind is given the smaller of two upper bounds of its lag in time
 * (since the newest primary position it has replayed was sampled, and since its last replayed commit).
 */
export function createReplicaSet(options: ReplicaSetOptions): ReplicaSet {
  const reads = { replica: 0, primary: 0 };
  const replicas: Replica[] = options.urls.map((url) => {
    const r: Replica = {
      name: describeReplica(url),
      pool: options.makePool(url, 'reads'),
      checker: options.makePool(url, 'checks'),
      state: 'starting',
      replay: 0n,
      lagMs: null,
      lagBytes: null,
      probing: null,
      target: null as unknown as ReplicaTarget,
    };
    r.target = { name: r.name, query: (args) => options.runOn(r.pool, args) };
    return r;
  });
  // The primary's position over the last REPLICA_MAX_LAG_MS and more, newest last: when a replica had replayed it.
  const samples: { lsn: bigint; at: number }[] = [];
  const keepSamples = Math.ceil((options.maxLagMs + 2_000) / REPLICA_CHECK_MS) + 2;
  let next = 0;
  let closed = false;

  async function readReplay(r: Replica) {
    const [row] = (
      await within(
        CHECK_TIMEOUT_MS,
        r.checker.query(
          `SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay,
                  (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS since_commit_ms`,
        ),
      )
    ).rows as { standby: boolean; replay: string | null; since_commit_ms: number | null }[];
    if (!row.standby) throw new Error('not a standby (promoted?)');
    const replay = parseLsn(row.replay);
    if (replay === null) throw new Error('no replay position');
    return { replay, sinceCommitMs: row.since_commit_ms };
  }

  function lagOf(replay: bigint, sinceCommitMs: number | null, primaryLsn: bigint | null, now: number) {
    // The newest sampled primary position the replica has replayed: it has everything committed before then.
    let sampled = Infinity;
    for (let i = samples.length - 1; i >= 0; i--)
      if (samples[i].lsn <= replay) {
        sampled = now - samples[i].at;
        break;
      }
    const ms = (bound: number) => (Number.isFinite(bound) ? Math.round(bound) : null);
    // The primary's position unread this time: the samples still bound the lag from above.
    if (primaryLsn === null) return { lagBytes: null, lagMs: ms(sampled) };
    const behind = primaryLsn - replay;
    if (behind <= 0n) return { lagBytes: 0, lagMs: 0 };
    return { lagBytes: Number(behind), lagMs: ms(Math.min(sampled, sinceCommitMs ?? Infinity)) };
  }

  async function check() {
    const now = Date.now();
    const primaryLsn = await within(
      CHECK_TIMEOUT_MS,
      options.primaryChecker.query(`SELECT pg_current_wal_lsn()::text AS lsn`),
    ).then(
      (res) => parseLsn((res.rows[0] as { lsn: string }).lsn),
      () => null,
    );
    if (primaryLsn !== null) {
      samples.push({ lsn: primaryLsn, at: now });
      if (samples.length > keepSamples) samples.shift();
    }
    await Promise.all(
      replicas.map(async (r) => {
        try {
          const { replay, sinceCommitMs } = await readReplay(r);
          r.replay = replay;
          Object.assign(r, lagOf(replay, sinceCommitMs, primaryLsn, now));
          // Without the primary's position the lag is unknown: the replica is kept out until it is known.
          r.state = r.lagMs !== null && r.lagMs <= options.maxLagMs ? 'healthy' : 'lagging';
        } catch (err) {
          if (r.state !== 'down') options.onError?.(`replica ${r.name} left out`, err);
          r.state = 'down';
          r.lagMs = r.lagBytes = null;
        }
      }),
    );
  }

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const loop = () => {
    running = check().finally(() => {
      if (!closed) {
        timer = setTimeout(loop, REPLICA_CHECK_MS);
        timer.unref();
      }
    });
  };
  loop();

  /** The replica's position now, read once for every caller waiting for it at the same time. */
  function probe(r: Replica): Promise<bigint | null> {
    return (r.probing ??= readReplay(r)
      .then(
        ({ replay }) => {
          if (replay > r.replay) r.replay = replay;
          return replay;
        },
        () => null,
      )
      .finally(() => {
        r.probing = null;
      }));
  }

  async function noteWrites(orgIds: Iterable<string>) {
    const orgs = [...new Set(orgIds)];
    if (orgs.length === 0) return;
    const res = await options.primary.query(`SELECT pg_current_wal_insert_lsn()::text AS lsn`);
    const lsn = parseLsn((res.rows[0] as { lsn: string }).lsn);
    if (lsn === null) return;
    try {
      await Promise.all(orgs.map((orgId) => options.positions.raise(orgId, lsn)));
    } catch (err) {
      // Other processes cannot learn of this write: it is answered once every replica in use has replayed it,
      // or once any that has not is so far behind that every process leaves it out.
      options.onError?.('write positions unavailable; waiting for the replicas to replay the write', err);
      await waitForReplay(lsn);
    }
  }

  async function waitForReplay(lsn: bigint) {
    const until = Date.now() + options.maxLagMs + 2 * REPLICA_CHECK_MS;
    for (;;) {
      const behind = replicas.filter((r) => r.state !== 'down' && r.replay < lsn);
      if (behind.length === 0 || Date.now() >= until) return;
      await Promise.all(behind.map(probe));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function choose(orgId: string): Promise<ReplicaTarget | null> {
    const healthy = replicas.filter((r) => r.state === 'healthy');
    if (healthy.length === 0) return null;
    let needed: bigint;
    try {
      needed = await options.positions.get(orgId);
    } catch (err) {
      // Without the organisation's position a replica could be stale for it: the primary answers.
      options.onError?.('write positions unavailable; reading from the primary', err);
      return null;
    }
    const start = next++ % healthy.length;
    for (let i = 0; i < healthy.length; i++) {
      const r = healthy[(start + i) % healthy.length];
      if (r.replay >= needed) return r.target;
    }
    // The cached positions are up to REPLICA_CHECK_MS old: the one replica in turn may have replayed it since.
    const r = healthy[start];
    const replay = await probe(r);
    return replay !== null && replay >= needed ? r.target : null;
  }

  return {
    reads,
    async target(scope) {
      const t = await (scope.target ??= choose(scope.orgId));
      if (t) reads.replica++;
      else reads.primary++;
      return t;
    },
    failed(target, err) {
      const r = replicas.find((x) => x.target === target);
      if (!r || r.state === 'down') return;
      options.onError?.(`read on replica ${r.name} failed; answered by the primary`, err);
      // Connection errors carry no SQLSTATE: the replica is left out until a check finds it healthy again.
      if (!(err as { code?: string }).code || /^(08|57P)/.test((err as { code: string }).code)) r.state = 'down';
    },
    noteWrite: (orgId) => noteWrites([orgId]),
    noteWrites,
    status: () =>
      replicas.map((r) => ({
        name: r.name,
        state: r.state,
        lagMs: r.lagMs,
        lagBytes: r.lagBytes,
      })),
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => {});
      await Promise.all(replicas.flatMap((r) => [r.pool.end().catch(() => {}), r.checker.end().catch(() => {})]));
      await options.primaryChecker.end().catch(() => {});
      await options.positions.close();
    },
  };
}
