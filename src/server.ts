import { buildApp } from './app.ts';
import { createDeps } from './composition.ts';
import { ConfigError, loadConfig } from './config.ts';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { DatabaseStartupError, openDatabase, waitForDatabase } from './db/database.ts';
import { loggerOptions } from './logger.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { migrate } from './db/migrator.ts';
import { startScheduler } from './jobs/scheduler.ts';

async function start() {
  const config = loadConfig();
  const startupLog = pino(loggerOptions(config.logLevel) as pino.LoggerOptions) as unknown as FastifyBaseLogger;
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    timeouts: config.dbTimeouts,
  });
  await waitForDatabase(db, {
    timeoutMs: config.dbStartupTimeoutMs,
    onRetry: ({ attempt, reason, retryInMs }) =>
      startupLog.warn(
        { attempt, retryInMs },
        `database not reachable (${reason}); retrying in ${Math.ceil(retryInMs / 1000)} s`,
      ),
  }).catch(async (err) => {
    await db.close().catch(() => {});
    throw err;
  });
  const applied = await migrate(db.sql);
  const deps = createDeps(config, db, startupLog);
  const log = deps.logger;
  if (applied.length) log.info({ applied }, 'migrations applied');
  const app = await buildApp(deps);
  await deps.delivery.start(); // before listening: frees this instance's stale webhook claims, starts delivering
  await app.listen({ port: config.port, host: config.host });
  log.info({ database: db.kind, dataDir: db.kind === 'pglite' ? config.dataDir : undefined }, 'fleet API ready');
  const scheduler = startScheduler(deps);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    // Stop taking requests and let in-flight ones finish, then stop jobs, then release the database.
    await app.close();
    await deps.delivery.close(); // aborts webhook sends in progress and releases their claims
    await scheduler.stop();
    await deps.close();
    await db.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

start().catch((err) => {
  if (err instanceof ConfigError || err instanceof DataDirLockedError) console.error(err.message);
  else if (err instanceof DatabaseStartupError) console.error(`fleet API failed to start: ${err.message}`);
  else console.error('fleet API failed to start:', err);
  process.exit(1);
});
