import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { Database } from './db/database.ts';
import { readBuildInfo, type BuildInfo } from './build-info.ts';
import { loadChangelog, type ChangelogEntry } from './changelog.ts';
import { createAuthenticator, type Authenticator } from './http/authenticator.ts';
import {
  createMemoryStore,
  createRateLimiter,
  createRedisStore,
  withCircuitBreaker,
  type RateLimiter,
} from './http/rate-limit.ts';
import { createBackground, type Background } from './jobs/background.ts';
import { createBillingSync } from './jobs/billing-sync.ts';
import { createDelivery, type Delivery } from './delivery/delivery.ts';
import { createSecretBox, type SecretBox } from './security/secret-box.ts';
import { keyringFromConfig, type Keyring } from './core/secret-keys.ts';
import { createWebhookSecretStore, type WebhookSecretStore } from './modules/webhooks/webhook-secrets.repository.ts';
import { createLogger } from './logger.ts';
import { createMetrics, type DeliveryMetricOutcome, type Metrics } from './metrics.ts';
import { createServices, type Services } from './modules/services.ts';

export interface AppDeps {
  config: Config;
  clock: Clock;
  db: Database;
  logger: FastifyBaseLogger;
  auth: Authenticator;
  rateLimiter: RateLimiter;
  background: Background;
  metrics: Metrics;
  services: Services;
  /** Outbound webhook delivery (sender, dispatcher, wake-up, breakers); main.ts starts it. */
  delivery: Delivery;
  /** Webhook signing secrets at rest: sealing and opening (secretBox), and their storage (start-up sealing). */
  secretBox: SecretBox;
  webhookSecrets: WebhookSecretStore;
  build: BuildInfo;
  changelog: ChangelogEntry[];
  /** Seams for tests that simulate a crash at a precise point; always empty in production. */
  testHooks: {
    afterIdempotentCommit?: (request: FastifyRequest, reply: FastifyReply) => void;
    /** Every response is also serialised by zod and compared with the compiled serialiser's output. */
    verifySerializers?: boolean;
  };
  /** Releases timers and connections owned by the dependencies (not the database). */
  close(): Promise<void>;
}

/** The composition root: every service factory is wired here, once per process. */
export function createDeps(
  config: Config,
  db: Database,
  logger?: FastifyBaseLogger,
  {
    clock = systemClock,
    keyring = keyringFromConfig(config.secretsEncryptionKeys, db.kind),
  }: {
    clock?: Clock;
    /** The keys of webhook secrets; main.ts passes the resolved one (key file included), see secret-keys.ts. */
    keyring?: Keyring;
  } = {},
): AppDeps {
  const log = logger ?? createLogger(config.logLevel, config.logFormat);
  const auth = createAuthenticator(db, { ttlMs: config.authCacheTtlMs });
  const store = config.redisUrl
    ? withCircuitBreaker(createRedisStore(config.redisUrl, config.redis.commandTimeoutMs), {
        intervalMs: config.redis.breakerIntervalMs,
        timeoutMs: config.redis.commandTimeoutMs,
        log,
      })
    : createMemoryStore();
  const rateLimiter = createRateLimiter(store, config.rateLimitPerMinute, log);
  const background = createBackground(log);
  const metrics = createMetrics(db, { enabled: config.metricsToken !== undefined });
  const billing = createBillingSync(db, config.billing, background, log);
  const secretBox = createSecretBox(keyring);
  const delivery = createDelivery({
    config,
    db,
    log,
    clock,
    secrets: secretBox,
    onOutcome: (outcome) => metrics.delivery(outcome.toLowerCase() as DeliveryMetricOutcome),
  });
  const services = createServices({
    config,
    clock,
    db,
    log,
    background,
    billing,
    auth,
    rateLimiter,
    metrics,
    webhookSender: delivery.sender,
    secretBox,
  });
  return {
    config,
    clock,
    db,
    logger: log,
    auth,
    rateLimiter,
    background,
    metrics,
    services,
    delivery,
    secretBox,
    webhookSecrets: createWebhookSecretStore(db, secretBox),
    build: readBuildInfo(config.build),
    changelog: loadChangelog(),
    testHooks: {},
    async close() {
      services.telematics.stop();
      services.imports.stop();
      await delivery.close();
      await background.idle();
      await services.telematics.close();
      await auth.close();
      await rateLimiter.close();
    },
  };
}
