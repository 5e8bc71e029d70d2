import type { FastifyBaseLogger } from 'fastify';

export type NotificationChannelName = 'PUSH' | 'EMAIL';

export interface NotificationRecipient {
  userId: string;
  email: string;
  name: string | null;
}

/** One row of the notifications table, as handed to a transport. */
export interface NotificationMessage {
  id: string;
  orgId: string;
  channel: NotificationChannelName;
  kind: string;
  subject: string;
  body: string;
  payload: Record<string, unknown> & { recipients?: NotificationRecipient[] };
  /** 1 on the first try. */
  attempt: number;
}

/**
 * Where notifications leave the service. A real provider (APNs/FCM for PUSH, SMTP or an email API for
 * EMAIL) implements this and is passed to createNotificationService; throwing marks the attempt failed
 * and the row is retried on the sender's backoff schedule.
 */
export interface NotificationTransport {
  readonly name: string;
  send(message: NotificationMessage): Promise<void>;
}

/** The default transport: writes each notification to the log, so a fresh install needs no provider. */
export function createLoggingTransport(log: FastifyBaseLogger): NotificationTransport {
  return {
    name: 'log',
    async send(message) {
      log.info(
        {
          notificationId: message.id,
          orgId: message.orgId,
          channel: message.channel,
          kind: message.kind,
          subject: message.subject,
          recipients: (message.payload.recipients ?? []).length,
          attempt: message.attempt,
        },
        'notification sent (logging transport)',
      );
    },
  };
}
