import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Authenticator } from '../http/authenticator.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { Background } from '../jobs/background.ts';
import type { BillingSync } from '../jobs/billing-sync.ts';
import { createAssetService } from './assets/assets.service.ts';
import { createMetaService } from './meta/meta.service.ts';

export interface ServiceDeps {
  config: Config;
  db: Database;
  log: FastifyBaseLogger;
  background: Background;
  billing: BillingSync;
  auth: Authenticator;
  rateLimiter: RateLimiter;
}

/** One instance of each service per process. Add a resource's service here. */
export function createServices(deps: ServiceDeps) {
  return {
    meta: createMetaService(deps),
    assets: createAssetService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;
