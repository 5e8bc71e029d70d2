import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Clock } from './core/clock.ts';
import type { Database } from './db/database.ts';
import type { Authenticator } from './http/authenticator.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { Background } from './jobs/background.ts';
import type { BillingSync } from './jobs/billing-sync.ts';
import type { Metrics } from './metrics.ts';
import type { WebhookSender } from './delivery/sender.ts';
import type { SecretBox } from './security/secret-box.ts';

/** What a service factory may ask for; each takes only the part it uses (Pick<ServiceDeps, ...>). */
export interface ServiceDeps {
  config: Config;
  /** The time rules measure elapsed time with (rotation overlaps, endpoint health); tests move it. */
  clock: Clock;
  db: Database;
  log: FastifyBaseLogger;
  background: Background;
  billing: BillingSync;
  auth: Authenticator;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  /** Outbound HTTP for the webhook test endpoint (owned and closed by the delivery machinery). */
  webhookSender: WebhookSender;
  /** Seals and opens webhook signing secrets (keys from SECRETS_ENCRYPTION_KEYS or the key file). */
  secretBox: SecretBox;
}
