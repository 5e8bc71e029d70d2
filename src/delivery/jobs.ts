import type { AppDeps } from '../composition.ts';
import type { JobDefinition } from '../jobs/scheduler.ts';

/** Delivers due webhooks on WEBHOOK_DISPATCH_CRON (every minute by default). */
export const webhookDispatchJob = (deps: AppDeps): JobDefinition => ({
  name: 'webhook-dispatch',
  cron: deps.config.webhooks.dispatchCron,
  run: () => deps.services.webhooks.dispatcher.dispatchOnce(),
});

/** Daily at 03:17: removes webhook history and outbox events older than 30 days. */
export const webhookRetentionJob = (deps: AppDeps): JobDefinition => ({
  name: 'webhook-retention',
  cron: '17 3 * * *',
  run: () => deps.services.webhooks.pruneHistory(),
});
