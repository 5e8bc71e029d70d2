import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseEncryptionKeys } from './core/secret-keys.ts';
import { envDescriptions } from './config-descriptions.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const positiveInt = z.coerce.number().int().positive();
const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

const trustProxy = z
  .string()
  .default('false')
  // Which peers may set X-Forwarded-For: none (false), any (true: only behind a proxy that overwrites
  // the header), or a list of proxy addresses/CIDRs (recommended). Fastify 5 ignores hop counts.
  .transform((v, ctx): boolean | string[] => {
    const s = v.trim().toLowerCase();
    if (s === '' || s === 'false' || s === '0' || s === 'no') return false;
    if (s === 'true' || s === 'yes') return true;
    const list = v
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    if (
      list.every((p) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(p) || ['loopback', 'linklocal', 'uniquelocal'].includes(p))
    )
      return list;
    ctx.addIssue({
      code: 'custom',
      message: 'must be false, true, or a comma-separated list of proxy addresses/CIDRs',
    });
    return z.NEVER;
  });

const schema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    DATABASE_DIRECT_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    DATABASE_REPLICA_URLS: z.preprocess(
      emptyAsUndefined,
      z
        .string()
        .optional()
        .transform((v, ctx) => {
          const urls = (v ?? '')
            .split(',')
            .map((u) => u.trim())
            .filter(Boolean);
          for (const u of urls)
            if (!z.url({ protocol: /^postgres(ql)?$/ }).safeParse(u).success) {
              ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of postgresql:// URLs' });
              return z.NEVER;
            }
          return urls;
        }),
    ),
    REPLICA_MAX_LAG_MS: positiveInt.default(5_000),
    DB_PREPARED_STATEMENTS: z
      .enum(['auto', 'true', 'false', '1', '0', 'yes', 'no'])
      .default('auto')
      .transform((v) => (v === 'auto' ? ('auto' as const) : v === 'true' || v === '1' || v === 'yes')),
    DATA_DIR: z.string().min(1).default('./data'),
    PUBLIC_BASE_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
    RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
    REDIS_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^rediss?$/ }).optional()),
    WEBHOOK_DISPATCH_CRON: z.string().min(1).default('* * * * *'),
    WEBHOOK_DISPATCH_MODE: z.enum(['continuous', 'tick']).default('continuous'),
    WEBHOOK_BATCH_SIZE: positiveInt.max(1000).default(50),
    WEBHOOK_CONCURRENCY: positiveInt.max(1000).default(64),
    WEBHOOK_SUBSCRIPTION_CONCURRENCY: positiveInt.max(1000).default(8),
    WEBHOOK_POLL_MS: positiveInt.default(5_000),
    WEBHOOK_LEASE_SEC: positiveInt.max(3600).default(15),
    WEBHOOK_BREAKER_FAILURES: positiveInt.default(5),
    WEBHOOK_BREAKER_COOLDOWN_MS: positiveInt.default(30_000),
    INSTANCE_ID: z.preprocess(emptyAsUndefined, z.string().min(1).max(200).optional()),
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .default('30,120,480,1800,7200,28800')
      .transform((s, ctx) => {
        const parts = s.split(',').map((p) => Number(p.trim()));
        if (parts.length === 0 || parts.some((n) => !Number.isInteger(n) || n < 0)) {
          ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of whole seconds' });
          return z.NEVER;
        }
        return parts;
      }),
    WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
    WEBHOOK_CA_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
    WEBHOOK_AUTO_DISABLE_AFTER_SEC: z.coerce
      .number()
      .int()
      .min(0)
      .default(5 * 24 * 3600),
    WEBHOOK_HISTORY_DAYS: positiveInt.max(3650).default(30),
    TELEMATICS_ENABLED: bool.default(true),
    TELEMATICS_TIMEOUT_MS: positiveInt.default(30_000),
    TELEMATICS_MAX_PAGE_BYTES: positiveInt.default(10 * 1024 * 1024),
    TELEMATICS_MAX_PAGES: positiveInt.max(100_000).default(1_000),
    TELEMATICS_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
    TELEMATICS_RETRY_BASE_MS: positiveInt.default(2_000),
    TELEMATICS_MAX_RETRY_AFTER_SEC: z.coerce.number().int().min(0).max(3600).default(120),
    TELEMATICS_LEASE_SEC: positiveInt.max(3600).default(120),
    IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
      .number()
      .int()
      .min(24, 'must be at least 24 (hours)')
      .max(24 * 90)
      .default(24),
    BILLING_SYNC_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
    BILLING_SYNC_TIMEOUT_MS: positiveInt.default(5_000),
    DB_POOL_SIZE: positiveInt.max(500).default(10),
    HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(400).default(30),
    AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
    METRICS_TOKEN: z.preprocess(emptyAsUndefined, z.string().min(16, 'must be at least 16 characters').optional()),
    SHUTDOWN_TIMEOUT_MS: positiveInt.default(15_000),
    SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(0),
    DB_CONNECT_TIMEOUT_MS: positiveInt.default(2_000),
    DB_STATEMENT_TIMEOUT_MS: positiveInt.default(5_000),
    DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: positiveInt.default(10_000),
    DB_QUERY_TIMEOUT_MS: positiveInt.default(6_000),
    DB_STARTUP_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
    MIGRATION_LOCK_WAIT_MS: positiveInt.default(300_000),
    MIGRATION_LOCK_TIMEOUT_MS: positiveInt.default(2_000),
    REQUEST_TIMEOUT_MS: positiveInt.default(15_000),
    REDIS_COMMAND_TIMEOUT_MS: positiveInt.default(500),
    REDIS_BREAKER_INTERVAL_MS: positiveInt.default(5_000),
    PRE_AUTH_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
    TRUST_PROXY: trustProxy,
    SECRETS_ENCRYPTION_KEYS_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
    SECRETS_ENCRYPTION_KEYS: z.preprocess(
      emptyAsUndefined,
      z
        .string()
        .optional()
        .transform((v, ctx) => {
          if (v === undefined) return [];
          const keys = parseEncryptionKeys(v);
          if (typeof keys !== 'string') return keys;
          ctx.addIssue({ code: 'custom', message: keys });
          return z.NEVER;
        }),
    ),
    ATTACHMENTS_STORAGE: z.enum(['local', 's3']).default('local'),
    ATTACHMENTS_DIR: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
    ATTACHMENT_MAX_BYTES: positiveInt.max(2 ** 31 - 1).default(25 * 1024 * 1024),
    ATTACHMENT_QUOTA_BYTES: z.coerce.number().int().min(0).default(0),
    ATTACHMENT_TYPES: z.preprocess(emptyAsUndefined, z.string().optional()),
    // At most the 24 h after which the sweep removes an upload that was never completed.
    ATTACHMENT_UPLOAD_URL_TTL_SEC: positiveInt.max(24 * 3600).default(3600),
    ATTACHMENT_ORPHAN_GRACE_SEC: positiveInt.default(6 * 3600),
    S3_BUCKET: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
    S3_REGION: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
    S3_ENDPOINT: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
    S3_FORCE_PATH_STYLE: bool.default(false),
    // Never empty: the sweep removes objects under the prefix that no row names, which must not be a whole bucket.
    S3_PREFIX: z.string().min(1).default('attachments/'),
    S3_TIMEOUT_MS: positiveInt.default(5_000),
    // S3 refuses parts under 5 MiB (but the last) and allows 10,000 parts: 5 MiB parts carry objects to 48 GiB.
    S3_UPLOAD_PART_MIB: positiveInt.min(5).max(512).default(5),
    S3_UPLOAD_QUEUE_SIZE: positiveInt.max(16).default(2),
    S3_UPLOAD_BUFFER_MIB: positiveInt.default(20),
    S3_UPLOAD_WAIT_MS: positiveInt.default(10_000),
    GIT_COMMIT: z.preprocess(emptyAsUndefined, z.string().optional()),
    GIT_BRANCH: z.preprocess(emptyAsUndefined, z.string().optional()),
  })
  .superRefine((env, ctx) => {
    if (env.DATABASE_DIRECT_URL && !env.DATABASE_URL)
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_DIRECT_URL'],
        message: 'is the direct connection beside DATABASE_URL (the pooled one): set DATABASE_URL too',
      });
    if (env.DATABASE_REPLICA_URLS.length > 0 && !env.DATABASE_URL)
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_REPLICA_URLS'],
        message: 'are replicas of the PostgreSQL database at DATABASE_URL: set DATABASE_URL too',
      });
    if (env.ATTACHMENTS_STORAGE === 's3' && !env.S3_BUCKET)
      ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'is required with ATTACHMENTS_STORAGE=s3' });
    if (2 * env.SHUTDOWN_DRAIN_MS >= env.SHUTDOWN_TIMEOUT_MS)
      ctx.addIssue({
        code: 'custom',
        path: ['SHUTDOWN_DRAIN_MS'],
        message: 'must be less than half of SHUTDOWN_TIMEOUT_MS (the drain takes up to twice its length)',
      });
  })
  .transform((env) => ({
    port: env.PORT,
    host: env.HOST,
    /** The application's connections; may be a transaction pooler (PgBouncer, RDS Proxy, …). */
    databaseUrl: env.DATABASE_URL,
    /** A direct session to the same database (migrations and their lock, LISTEN); unset = all through databaseUrl. */
    databaseDirectUrl: env.DATABASE_DIRECT_URL,
    /**
     * Streaming replicas of databaseUrl for reads that tolerate lag, with read-your-writes per organisation
     * (db/replicas.ts); one left out while more than maxLagMs behind or not answering.
     */
    replicas: { urls: env.DATABASE_REPLICA_URLS, maxLagMs: env.REPLICA_MAX_LAG_MS },
    /** Named prepared statements on databaseUrl's connections: auto = on those that prove to be direct sessions. */
    dbPreparedStatements: env.DB_PREPARED_STATEMENTS,
    dataDir: env.DATA_DIR,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    redisUrl: env.REDIS_URL,
    webhooks: {
      /** The sweep for due retries and expired leases (the spec's per-minute scheduler tick). */
      dispatchCron: env.WEBHOOK_DISPATCH_CRON,
      /** continuous: new events wake the dispatcher; tick: only the cron tick dispatches (the spec's model). */
      dispatchMode: env.WEBHOOK_DISPATCH_MODE,
      /** Rows per claim; in tick mode also the cap per tick. */
      batchSize: env.WEBHOOK_BATCH_SIZE,
      /** Sends in flight at once per process, and at most per subscription (its share). */
      concurrency: env.WEBHOOK_CONCURRENCY,
      subscriptionConcurrency: Math.min(env.WEBHOOK_SUBSCRIPTION_CONCURRENCY, env.WEBHOOK_CONCURRENCY),
      pollMs: env.WEBHOOK_POLL_MS,
      leaseSec: env.WEBHOOK_LEASE_SEC,
      breaker: { failures: env.WEBHOOK_BREAKER_FAILURES, cooldownMs: env.WEBHOOK_BREAKER_COOLDOWN_MS },
      retryScheduleSec: env.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      allowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      /** PEM bundle of extra CAs trusted for receivers (e.g. an internal CA), on top of the system store. */
      caFile: env.WEBHOOK_CA_FILE,
      /**
       * A subscription whose every attempt failed for this long (and that still failed within the last day,
       * or within the period when it is shorter) is disabled; 0 = never.
       */
      autoDisableAfterSec: env.WEBHOOK_AUTO_DISABLE_AFTER_SEC,
      /** Delivery history and the event feed are kept this many days (then pruned by the retention job). */
      historyDays: env.WEBHOOK_HISTORY_DAYS,
    },
    telematics: {
      /** The scheduler of feed runs (a sync asked for through the API runs either way). */
      enabled: env.TELEMATICS_ENABLED,
      timeoutMs: env.TELEMATICS_TIMEOUT_MS,
      maxPageBytes: env.TELEMATICS_MAX_PAGE_BYTES,
      maxPages: env.TELEMATICS_MAX_PAGES,
      /** Tries after the first for a 5xx or a timeout, spaced retryBaseMs, then doubling. */
      retries: env.TELEMATICS_RETRIES,
      retryBaseMs: env.TELEMATICS_RETRY_BASE_MS,
      /** A 429 asking for a longer wait than this fails the run (the next scheduled one tries again). */
      maxRetryAfterSec: env.TELEMATICS_MAX_RETRY_AFTER_SEC,
      leaseSec: env.TELEMATICS_LEASE_SEC,
    },
    /**
     * Keys of webhook signing secrets at rest (the first encrypts); empty: the embedded database's key file.
     * Resolved into a keyring by core/secret-keys.ts, which knows the database kind.
     */
    secretsEncryptionKeys: env.SECRETS_ENCRYPTION_KEYS,
    secretsEncryptionKeysFile: env.SECRETS_ENCRYPTION_KEYS_FILE,
    /** Idempotency-Key records are kept at least this long (then pruned by the idempotency-keys job). */
    idempotencyKeyTtlHours: env.IDEMPOTENCY_KEY_TTL_HOURS,
    billing: { url: env.BILLING_SYNC_URL, timeoutMs: env.BILLING_SYNC_TIMEOUT_MS },
    dbPoolSize: env.DB_POOL_SIZE,
    /** V8: old-space growth past the live heap, and no pretenuring (server.ts); 0 = V8's own heuristics. */
    heapGrowthPercent: env.HEAP_GROWTH_PERCENT,
    authCacheTtlMs: env.AUTH_CACHE_TTL_MS,
    attachments: {
      storage: env.ATTACHMENTS_STORAGE,
      /** Local storage root; the default sits beside the embedded database (a volume in containers). */
      dir: env.ATTACHMENTS_DIR ?? path.join(env.DATA_DIR, 'attachments'),
      maxBytes: env.ATTACHMENT_MAX_BYTES,
      /** Bytes per organisation, PENDING uploads counted at their declared size; 0 = no quota. */
      quotaBytes: env.ATTACHMENT_QUOTA_BYTES,
      /** Allowed detected types; undefined = the default list (attachment-types.rules.ts checks the names). */
      types: env.ATTACHMENT_TYPES?.split(',')
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean),
      uploadUrlTtlSec: env.ATTACHMENT_UPLOAD_URL_TTL_SEC,
      orphanGraceSec: env.ATTACHMENT_ORPHAN_GRACE_SEC,
      s3: {
        bucket: env.S3_BUCKET ?? '',
        region: env.S3_REGION ?? 'us-east-1',
        endpoint: env.S3_ENDPOINT,
        forcePathStyle: env.S3_FORCE_PATH_STYLE,
        prefix: env.S3_PREFIX,
        timeoutMs: env.S3_TIMEOUT_MS,
        /** Streamed uploads: part size, parts in flight per upload, all part buffers of the process, wait for one. */
        upload: {
          partBytes: env.S3_UPLOAD_PART_MIB * 1024 * 1024,
          queueSize: env.S3_UPLOAD_QUEUE_SIZE,
          bufferBytes: Math.max(env.S3_UPLOAD_BUFFER_MIB, env.S3_UPLOAD_PART_MIB) * 1024 * 1024,
          waitMs: env.S3_UPLOAD_WAIT_MS,
        },
      },
    },
    build: { commit: env.GIT_COMMIT, branch: env.GIT_BRANCH },
    metricsToken: env.METRICS_TOKEN,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    /**
     * After SIGTERM, how long the server keeps answering with readiness 503 before it stops listening, and then
     * at most how long it waits for the balancer to close its connections (core/shutdown.ts); 0 = no drain.
     */
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    dbTimeouts: {
      connectMs: env.DB_CONNECT_TIMEOUT_MS,
      statementMs: env.DB_STATEMENT_TIMEOUT_MS,
      idleInTransactionMs: env.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      queryMs: env.DB_QUERY_TIMEOUT_MS,
    },
    dbStartupTimeoutMs: env.DB_STARTUP_TIMEOUT_MS,
    /** Start-up migrations: longest wait for another process's migration lock; each DDL statement's lock_timeout. */
    migrations: { lockWaitMs: env.MIGRATION_LOCK_WAIT_MS, lockTimeoutMs: env.MIGRATION_LOCK_TIMEOUT_MS },
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    redis: { commandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS, breakerIntervalMs: env.REDIS_BREAKER_INTERVAL_MS },
    preAuthRateLimitPerMinute: env.PRE_AUTH_RATE_LIMIT_PER_MINUTE,
    trustProxy: env.TRUST_PROXY,
    /** Names this process's delivery claims; stable across restarts so a restart frees its own stale claims. */
    // (A random port gets a random id: nothing to find again after a restart.)
    instanceId: env.INSTANCE_ID ?? `${os.hostname()}:${env.PORT || randomUUID()}`,
  }));

/** Gives each field its operator-facing description (zod's metadata registry, what `.describe()` writes). */
function describeFields<S extends z.ZodRawShape>(shape: S, descriptions: { [K in keyof S]: string }): void {
  for (const key of Object.keys(shape) as (keyof S & string)[])
    z.globalRegistry.add(shape[key], { description: descriptions[key] });
}
describeFields(schema.in.shape, envDescriptions);

/** The API's environment schema, for docs/configuration.md (scripts/config-docs.ts). */
export const envSchema = schema;

export type Config = z.output<typeof schema>;

export class ConfigError extends Error {}

/** Parses the environment once; every other module receives the typed result. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
    // One problem, one line (what an operator greps for); several, one line each under a heading.
    throw new ConfigError(
      lines.length === 1
        ? `Invalid configuration: ${lines[0]}`
        : `Invalid configuration:\n${lines.map((l) => `  ${l}`).join('\n')}`,
    );
  }
  return result.data;
}
