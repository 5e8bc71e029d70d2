import { maintainPartitions } from './db/partitions.ts';
import { buildApp } from './app.ts';
import { createDeps } from './composition.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DatabaseStartupError, openDatabase, waitForDatabase } from './db/database.ts';
import { createLogger } from './logger.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { migrate, MigrationError, readMigrations } from './db/migrator.ts';
import { migrateDatabase } from './db/direct.ts';
import { replicaOptions } from './db/replica-config.ts';
import { startScheduler } from './jobs/scheduler.ts';
import { exitOnSignals, registerDrain } from './core/shutdown.ts';
import { resolveKeyring, SecretKeyError } from './core/secret-keys.ts';
import v8 from 'node:v8';

// The jobs are scheduled this long after the server starts answering (see startScheduler); a tick due within it is
// simply the next one.
const SCHEDULER_DELAY_MS = 1_000;

async function start() {
  const config = loadConfig();
  // Bounded old-space growth and no pretenuring keep request garbage young, where collecting it is cheap, instead
  // of piling up in old space until a late full collection (docs/adr/0016-v8-heap-growth.md). V8 reads both flags at
  // every collection, so setting them here, before the app allocates much, takes effect; heap limits
  // (--max-old-space-size, --max-semi-space-size) are fixed when the isolate is created: NODE_OPTIONS only.
  if (config.heapGrowthPercent > 0) {
    v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
    v8.setFlagsFromString('--no-allocation-site-pretenuring');
  }
  const startupLog = createLogger(config.logLevel, config.logFormat);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    timeouts: config.dbTimeouts,
    preparedStatements: config.dbPreparedStatements,
    replicas: replicaOptions(config, startupLog),
  });
  // Before anything waits on the database: a missing key is a configuration error, said at once. (The
  // embedded database's key file is read or created here, under the data directory's lock.)
  let keyring;
  try {
    keyring = resolveKeyring({
      configured: config.secretsEncryptionKeys,
      keyFile: config.secretsEncryptionKeysFile,
      database: db.kind,
      dataDir: config.dataDir,
      log: startupLog,
    });
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  const onRetry = ({ attempt, reason, retryInMs }: { attempt: number; reason: string; retryInMs: number }) =>
    startupLog.warn(
      { attempt, retryInMs },
      `database not reachable (${reason}); retrying in ${Math.ceil(retryInMs / 1000)} s`,
    );
  await (async () => {
    await waitForDatabase(db, { timeoutMs: config.dbStartupTimeoutMs, onRetry });
    // With DATABASE_DIRECT_URL the migrations run on a direct connection of their own, closed afterwards.
    return migrateDatabase(db, {
      directUrl: config.databaseDirectUrl,
      timeouts: config.dbTimeouts,
      startupTimeoutMs: config.dbStartupTimeoutMs,
      onRetry,
      run: (sql) => migrate(sql, readMigrations(), { ...config.migrations, log: startupLog }),
    });
  })().catch(async (err) => {
    await db.close().catch(() => {});
    throw err;
  });
  const deps = createDeps(config, db, startupLog, { keyring });
  const log = deps.logger;
  // Secrets left in plaintext by the previous release are sealed before this instance signs anything (it
  // reads either form, so deliveries never wait for this; docs/adr/0008-secrets-envelope.md).
  const sealed = await deps.webhookSecrets.reseal('plaintext');
  if (sealed.resealed) log.info({ sealed: sealed.resealed }, 'webhook signing secrets encrypted at rest');
  for (const f of sealed.failed)
    log.warn({ subscriptionId: f.subscriptionId }, `webhook secret not sealed: ${f.reason}`);
  // The months ahead exist before the first write (the daily job keeps them ahead); a failure waits for that job.
  await maintainPartitions(db).catch((err) => log.warn({ err }, 'monthly partitions not created ahead'));
  const app = await buildApp(deps);
  const drain = registerDrain(app, {
    readinessUrl: '/api/v1/health',
    notReady: async () => ({
      ok: false,
      database: await deps.services.meta.pingDatabase(),
      apiVersion: 'v1',
      commit: deps.build.commit,
      uptimeSec: Math.floor(process.uptime()),
    }),
  });
  // Prisma instantiates its query compiler on its first query: here, so the first request does not wait.
  await db.prisma.$executeRaw`SELECT 1`;
  await app.listen({ port: config.port, host: config.host });
  log.info(
    {
      database: db.kind,
      dataDir: db.kind === 'pglite' ? config.dataDir : undefined,
      // How other instances' commits wake this one's webhook dispatcher (docs/adr/0013-outbox-and-delivery-claims.md).
      crossInstanceWakeups:
        db.kind === 'pglite'
          ? undefined
          : config.databaseDirectUrl
            ? 'LISTEN on DATABASE_DIRECT_URL'
            : `poll every ${config.webhooks.pollMs} ms`,
    },
    'fleet API ready',
  );
  // Webhook dispatch starts once the server answers: no request needs it (events committed before it runs wait in
  // the outbox, as they would for a poll), and its first claims then do not hold up the first answers.
  void deps.delivery.start();
  const scheduler = startScheduler(deps, { delayMs: SCHEDULER_DELAY_MS });

  // Drain (SIGTERM only: a load balancer's stop; Ctrl-C in a terminal stops at once), stop taking requests and let
  // in-flight ones finish, then stop jobs, then release the database.
  exitOnSignals(log, config.shutdownTimeoutMs, [
    ['drainMs', (signal) => drain.run(signal === 'SIGTERM' ? config.shutdownDrainMs : 0)],
    ['httpMs', () => app.close()],
    ['deliveryMs', () => deps.delivery.close()], // aborts sends in progress and releases their claims
    ['schedulerMs', () => scheduler.stop()],
    ['servicesMs', () => deps.close()],
    ['databaseMs', () => db.close()],
  ]);
}

start().catch((err) => {
  if (err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof SecretKeyError)
    console.error(err.message);
  else if (err instanceof DatabaseStartupError || err instanceof MigrationError)
    console.error(`fleet API failed to start: ${err.message}`);
  else console.error('fleet API failed to start:', err);
  process.exit(1);
});
