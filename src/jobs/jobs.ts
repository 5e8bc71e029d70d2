import type { AppDeps } from '../composition.ts';
import { maintainPartitions } from '../db/partitions.ts';
import { pruneWebhookHistory } from '../delivery/retention.ts';
import { pruneIdempotencyKeys } from '../http/idempotency-store.ts';

export interface JobDefinition {
  name: string;
  /** node-cron expression (a leading seconds field is allowed). */
  cron: string;
  run(): Promise<unknown>;
}

/** A job is a small function of the dependencies it uses; null when configuration disables it. */
type Job<K extends keyof AppDeps> = (deps: Pick<AppDeps, K>) => JobDefinition | null;

/**
 * WEBHOOK_DISPATCH_CRON (every minute by default): in continuous mode the sweep for due retries and expired
 * leases (new events do not wait for it); in tick mode the only dispatch, up to WEBHOOK_BATCH_SIZE per tick.
 */
const webhookDispatch: Job<'config' | 'delivery'> = ({ config, delivery }) => ({
  name: 'webhook-dispatch',
  cron: config.webhooks.dispatchCron,
  run: () => delivery.tick(),
});

/** Daily at 03:17: removes webhook history and events (the event feed) older than WEBHOOK_HISTORY_DAYS (30). */
const webhookRetention: Job<'db' | 'config'> = ({ db, config }) => ({
  name: 'webhook-retention',
  cron: '17 3 * * *',
  run: () => pruneWebhookHistory(db, new Date(), config.webhooks.historyDays),
});

/** Daily at 03:07: the monthly partitions of meter logs, events and deliveries for the months ahead. */
const partitionMaintenance: Job<'db'> = ({ db }) => ({
  name: 'partition-maintenance',
  cron: '7 3 * * *',
  run: () => maintainPartitions(db),
});

/** Hourly at minute 41: removes Idempotency-Key records older than IDEMPOTENCY_KEY_TTL_HOURS (24). */
const idempotencyRetention: Job<'db' | 'config'> = ({ db, config }) => ({
  name: 'idempotency-keys-retention',
  cron: '41 * * * *',
  run: () => pruneIdempotencyKeys(db, new Date(), config.idempotencyKeyTtlHours),
});

/**
 * Every 10 minutes: subscriptions whose every delivery attempt failed for WEBHOOK_AUTO_DISABLE_AFTER_SEC
 * (default 5 days) are disabled and their organisation notified (one statement; off when the period is 0).
 */
const webhookAutoDisable: Job<'config' | 'services'> = ({ config, services }) =>
  config.webhooks.autoDisableAfterSec > 0
    ? { name: 'webhook-auto-disable', cron: '*/10 * * * *', run: () => services.webhookRecovery.disableFailing() }
    : null;

/** Every 15 seconds: new-flag push/email goes out shortly after the flag commits. */
const sendNotifications: Job<'services'> = ({ services }) => ({
  name: 'notifications-send',
  cron: '*/15 * * * * *',
  run: () => services.notifications.sendPending(),
});

/** Daily at 06:00 (server time): registration and insurance dates within 30 days get one heads-up each. */
const renewalHeadsUps: Job<'services'> = ({ services }) => ({
  name: 'renewal-heads-ups',
  cron: '0 6 * * *',
  run: () => services.notifications.queueRenewalHeadsUps(),
});

/**
 * Every minute: webhook secrets written in plaintext by instances of the previous release during a rolling
 * upgrade are sealed (a no-op statement once the upgrade is over; docs/adr/0008-secrets-envelope.md).
 */
const webhookSecretSealing: Job<'webhookSecrets'> = ({ webhookSecrets }) => ({
  name: 'webhook-secrets-seal',
  cron: '30 * * * * *',
  run: () => webhookSecrets.reseal('plaintext', { waitMs: 0 }),
});

/**
 * Every minute: the calendar sweep of service reminders (DUE_SOON starts, due dates, snooze ends): indexed batches
 * of 200, each its own transaction, until nothing more is due or 40 s have passed (service-reminder-sweep.job.ts).
 */
const serviceReminderSweep: Job<'services'> = ({ services }) => ({
  name: 'service-reminder-sweep',
  cron: '* * * * *',
  run: () => services.serviceReminders.sweepTick(),
});

/**
 * Every 30 seconds (TELEMATICS_ENABLED): telematics connections whose next run is due and whose lease is free are
 * claimed and run in the background, a few per instance (telematics-sync.job.ts).
 */
const telematicsSync: Job<'config' | 'services'> = ({ config, services }) =>
  config.telematics.enabled
    ? { name: 'telematics-sync', cron: '*/30 * * * * *', run: () => services.telematics.tick() }
    : null;

/**
 * Every 30 minutes: presigned uploads not completed within 24 h are removed with their bytes, and stored objects
 * without a row (a crash mid-upload, a deleted subject's files) once older than ATTACHMENT_ORPHAN_GRACE_SEC.
 */
const attachmentSweep: Job<'services'> = ({ services }) => ({
  name: 'attachment-sweep',
  cron: '23,53 * * * *',
  run: () => services.attachments.sweep(new Date()),
});

/**
 * Every 15 seconds: imports in progress whose process stopped (lease lapsed) are taken over: resumed from their
 * stored rows, or ended failed with the reason (import-run.job.ts).
 */
const importResume: Job<'services'> = ({ services }) => ({
  name: 'imports-resume',
  cron: '*/15 * * * * *',
  run: () => services.imports.tick(),
});

/** Every periodic job of the service, in one place. Add a job here with one line. */
export const JOBS: ((deps: AppDeps) => JobDefinition | null)[] = [
  webhookDispatch,
  webhookRetention,
  partitionMaintenance,
  webhookAutoDisable,
  idempotencyRetention,
  sendNotifications,
  renewalHeadsUps,
  webhookSecretSealing,
  serviceReminderSweep,
  telematicsSync,
  attachmentSweep,
  importResume,
];
