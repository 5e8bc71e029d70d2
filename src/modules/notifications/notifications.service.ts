import type { ServiceDeps } from '../../service-deps.ts';
import { queueRenewalHeadsUps } from './notifications.repository.ts';
import { createNotificationSender } from './notification-sender.job.ts';
import { createLoggingTransport, type NotificationTransport } from './notification-transport.adapter.ts';

/**
 * Notification delivery and the renewal sweep, run by the jobs in src/jobs/jobs.ts. Pass a real
 * provider's transport to replace the default logging one.
 */
export function createNotificationService(
  { db, log }: Pick<ServiceDeps, 'db' | 'log'>,
  transport: NotificationTransport = createLoggingTransport(log),
) {
  const sender = createNotificationSender({ db, log, transport });
  return {
    sendPending: () => sender.sendPending(),
    /** Daily sweep over every organisation; readings also trigger it for their own asset. */
    async queueRenewalHeadsUps(now = new Date()) {
      const created = await queueRenewalHeadsUps(db.prisma, {}, now);
      if (created > 0) log.info({ created }, 'renewal heads-ups queued');
      return created;
    },
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
