import { lazyModule } from '../core/lazy-module.ts';
import { fromSortable, sortableLsn } from './wal-position.ts';

const ioredis = lazyModule<typeof import('ioredis')>('ioredis');

/**
 * Each organisation's last committed write position on the primary: a read of the organisation may go to a replica
 * only once the replica has replayed it. Only ever raised (two processes recording out of order keep the higher).
 */
export interface WritePositions {
  kind: 'redis' | 'memory';
  raise(orgId: string, lsn: bigint): Promise<void>;
  /** 0 when the organisation wrote nothing within the keep period (then any healthy replica has it). */
  get(orgId: string): Promise<bigint>;
  close(): Promise<void>;
}

/**
 * How long a position is kept: far longer than any replica that is still used can be behind (REPLICA_MAX_LAG_MS,
 * checked every 500 ms), so an expired position is one every healthy replica has replayed.
 */
const KEEP_SEC = 3600;

const RAISE_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
if (not cur) or cur < ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
else redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** Seen by every API process sharing the Redis. */
export function redisWritePositions(url: string, commandTimeoutMs: number, prefix = 'fleet:wal:'): WritePositions {
  const { Redis } = ioredis();
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: commandTimeoutMs, connectTimeout: 2_000 });
  redis.on('error', () => {});
  return {
    kind: 'redis',
    async raise(orgId, lsn) {
      await redis.eval(RAISE_SCRIPT, 1, prefix + orgId, sortableLsn(lsn), KEEP_SEC);
    },
    async get(orgId) {
      return fromSortable(await redis.get(prefix + orgId));
    },
    async close() {
      redis.disconnect();
    },
  };
}

/** One process only: another API process does not see these writes (use Redis with more than one process). */
export function memoryWritePositions(now: () => number = Date.now): WritePositions {
  const positions = new Map<string, { lsn: bigint; until: number }>();
  return {
    kind: 'memory',
    async raise(orgId, lsn) {
      const cur = positions.get(orgId);
      const until = now() + KEEP_SEC * 1000;
      // Re-inserted so that the Map's order is the order of expiry: the sweep below stops at the first live one.
      positions.delete(orgId);
      positions.set(orgId, { lsn: cur && cur.lsn > lsn ? cur.lsn : lsn, until });
      for (const [id, p] of positions) {
        if (p.until > now()) break;
        positions.delete(id);
      }
    },
    async get(orgId) {
      const p = positions.get(orgId);
      return p && p.until > now() ? p.lsn : 0n;
    },
    async close() {
      positions.clear();
    },
  };
}
