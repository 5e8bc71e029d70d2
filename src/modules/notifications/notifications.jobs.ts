import type { AppDeps } from '../../composition.ts';
import type { JobDefinition } from '../../jobs/scheduler.ts';

/** Every 15 seconds: new-flag push/email goes out shortly after the flag commits. */
export const sendNotificationsJob = (deps: AppDeps): JobDefinition => ({
  name: 'notifications-send',
  cron: '*/15 * * * * *',
  run: () => deps.services.notifications.sendPending(),
});

/** Daily at 06:00 (server time): registration and insurance dates within 30 days get one heads-up each. */
export const renewalHeadsUpsJob = (deps: AppDeps): JobDefinition => ({
  name: 'renewal-heads-ups',
  cron: '0 6 * * *',
  run: () => deps.services.notifications.queueRenewalHeadsUps(),
});
