import type { AppDeps } from '../composition.ts';
import type { JobDefinition } from '../jobs/scheduler.ts';
import { pruneWebhookHistory } from './retention.ts';

/**
 * WEBHOOK_DISPATCH_CRON (every minute by default): in continuous mode the sweep for due retries and expired
 * leases (new events do not wait for it); in tick mode the only dispatch, up to WEBHOOK_BATCH_SIZE per tick.
 */
export const webhookDispatchJob = (deps: AppDeps): JobDefinition => ({
  name: 'webhook-dispatch',
  cron: deps.config.webhooks.dispatchCron,
  run: () => deps.delivery.tick(),
});

/** Daily at 03:17: removes webhook history and outbox events older than 30 days. */
export const webhookRetentionJob = (deps: AppDeps): JobDefinition => ({
  name: 'webhook-retention',
  cron: '17 3 * * *',
  run: () => pruneWebhookHistory(deps.db),
});
