import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { ReplicaOptions } from './database.ts';
import { memoryWritePositions, redisWritePositions } from './write-positions.ts';

/** A repeated warning (a replica down, Redis unreachable) is logged once per this period, not per request. */
const WARN_EVERY_MS = 10_000;

/** DATABASE_REPLICA_URLS as openDatabase takes them; undefined without replicas (nothing changes then). */
export function replicaOptions(config: Config, log: FastifyBaseLogger): ReplicaOptions | undefined {
  if (!config.databaseUrl || config.replicas.urls.length === 0) return undefined;
  if (!config.redisUrl)
    log.info('read replicas: write positions are kept in this process (one API process only; set REDIS_URL)');
  const lastWarned = new Map<string, number>();
  return {
    urls: config.replicas.urls,
    maxLagMs: config.replicas.maxLagMs,
    positions: config.redisUrl
      ? redisWritePositions(config.redisUrl, config.redis.commandTimeoutMs)
      : memoryWritePositions(),
    onError(message, err) {
      const now = Date.now();
      if ((lastWarned.get(message) ?? 0) + WARN_EVERY_MS > now) return;
      lastWarned.set(message, now);
      log.warn({ err }, message);
    },
  };
}
