import { z } from 'zod';
import type { WebhookDelivery, WebhookSubscription } from '../../generated/prisma/client.ts';
import { EVENT_TYPES } from '../../events/catalog.ts';
import { csvEnum, cursorQuery, dateTime, dateTimeInput, iso, limitQuery, optionalText } from '../../core/schemas.ts';

export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'ABANDONED'] as const;

export const SECRET_WARNING =
  'Store this secret now: it is shown only this once and cannot be retrieved later. ' +
  'Use it to verify the X-Service-Signature (or webhook-signature) of every delivery; to replace it, ' +
  'POST /webhooks/{id}/rotate-secret (both secrets sign during the overlap).';

/** Rotation overlap: default one day, at most seven. */
export const DEFAULT_OVERLAP_SEC = 86_400;
export const MAX_OVERLAP_SEC = 7 * 86_400;
/** Rows one recover call re-queues at most (one short statement); nextCursor continues the window. */
export const RECOVER_BATCH = 1_000;
/** Re-queue log entries kept per delivery. */
export const REQUEUE_LOG_MAX = 20;

// ---- requests

const url = z
  .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
  .trim()
  .min(1, 'is required')
  .max(2048)
  .describe('HTTPS endpoint that receives the POSTs; must be publicly reachable (no private or loopback addresses)')
  .meta({ pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]://', format: 'uri' });

const events = z
  .array(z.string().max(100), {
    error: (i) => (i.input === undefined ? 'is required' : 'must be an array of event type names'),
  })
  .max(100)
  .describe(`Event types to receive; unknown names are dropped. Known: ${EVENT_TYPES.join(', ')}`);

export const CreateWebhookBody = z.object({
  url,
  events,
  description: optionalText(500),
});
export type CreateWebhookInput = z.output<typeof CreateWebhookBody>;

export const UPDATABLE_FIELDS = ['url', 'events', 'description', 'active'] as const;

export const UpdateWebhookBody = z
  .object({
    url: url.optional(),
    events: events.optional(),
    description: optionalText(500),
    active: z
      .boolean()
      .optional()
      .describe(
        'false pauses deliveries (queued ones wait until it is true again); true re-enables a paused or automatically disabled subscription',
      ),
  })
  .describe('Any subset of the fields; the secret is kept')
  .meta({ minProperties: 1 });
export type UpdateWebhookInput = z.output<typeof UpdateWebhookBody>;

export const ListWebhooksQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

export const RotateSecretBody = z
  .object({
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_OVERLAP_SEC, 'must be at most 604800 (7 days)')
      .optional()
      .describe('How long the replaced secret keeps signing beside the new one: default 86400 (24 h), 0 retires it now')
      .meta({ example: 86400 }),
  })
  // Optional body: nullish renders as "may be null" in OpenAPI, which marks the request body optional there.
  .nullish();
export type RotateSecretInput = z.output<typeof RotateSecretBody>;

export const DeliveryParams = z.object({ id: z.string().min(1), deliveryId: z.string().min(1) });

export const RecoverBody = z.object({
  since: dateTimeInput().describe('Re-queue deliveries created at or after this time'),
  until: dateTimeInput().optional().describe('... and before this time (default: now)'),
  cursor: z
    .string()
    .max(500)
    .optional()
    .describe('nextCursor of the previous call, to continue the same window past its first 1,000 deliveries'),
});
export type RecoverInput = z.output<typeof RecoverBody>;

export const ListDeliveriesQuery = z.object({
  status: csvEnum(DELIVERY_STATUSES, DELIVERY_STATUSES),
  limit: limitQuery,
  cursor: cursorQuery,
});

// ---- responses

export const WebhookRow = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe(
        'Why the subscription is inactive (automatic disabling of a failing endpoint, or a pause); null while active',
      ),
    disabledAt: dateTime().nullable().describe('When it became inactive; null while active'),
    failingSince: dateTime()
      .nullable()
      .describe('First failed attempt since the last successful one; null while the endpoint is healthy'),
    previousSecretExpiresAt: dateTime()
      .nullable()
      .describe('After a rotation with overlap: when the replaced secret stops (or stopped) signing; null otherwise'),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'WebhookSubscriptionRow' });

export const WebhookDetail = WebhookRow.extend({
  deliveryCounts: z
    .object({
      PENDING: z.number().int(),
      DELIVERED: z.number().int(),
      FAILED: z.number().int(),
      ABANDONED: z.number().int(),
    })
    .describe('Delivery history rows by status (history is kept 30 days)'),
}).meta({ id: 'WebhookSubscriptionDetail' });

export const CreateWebhookResponse = z.object({
  ok: z.literal(true),
  subscriptionId: z.string(),
  secret: z.string().describe('Signing secret, returned only by this call'),
  secretWarning: z.string(),
  events: z.array(z.string()).describe('The accepted event names (unknown ones dropped)'),
  url: z.string(),
  description: z.string().nullable(),
  active: z.boolean(),
  createdAt: dateTime(),
});
export const ListWebhooksResponse = z.object({
  ok: z.literal(true),
  webhooks: z.array(WebhookRow),
  nextCursor: z.string().nullable(),
});
export const WebhookDetailResponse = z.object({ ok: z.literal(true), webhook: WebhookDetail });
export const DeleteWebhookResponse = z.object({
  ok: z.literal(true),
  subscriptionId: z.string(),
  deleted: z.literal(true),
});

export const RequeueEntry = z
  .object({
    at: dateTime(),
    via: z.enum(['resend', 'recover']),
    actorId: z.string().nullable().describe('The user whose key asked for it'),
    previousStatus: z.enum(DELIVERY_STATUSES).describe('The status it had when it was re-queued'),
    previousAttempts: z.number().int().describe('Attempts of the cycle it replaced (a re-queue starts a new cycle)'),
  })
  .meta({ id: 'WebhookDeliveryRequeue' });

export const WebhookDeliveryRow = z
  .object({
    id: z.string().describe('Delivery id: the envelope id the receiver saw'),
    eventId: z.string(),
    event: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    nextAttemptAt: dateTime().nullable().describe('When the next attempt is due; null once DELIVERED or ABANDONED'),
    lastAttemptAt: dateTime().nullable(),
    deliveredAt: dateTime().nullable(),
    responseStatus: z.number().int().nullable(),
    responseBody: z.string().nullable().describe('First 500 characters of the last response body'),
    error: z.string().nullable().describe('Why the last attempt failed (or why it was not sent)'),
    requeues: z
      .array(RequeueEntry)
      .describe('Resends and recovers of this delivery, oldest first (the last 20); empty when never re-queued'),
    createdAt: dateTime(),
  })
  .meta({ id: 'WebhookDeliveryRow' });
export const ListDeliveriesResponse = z.object({
  ok: z.literal(true),
  deliveries: z.array(WebhookDeliveryRow),
  nextCursor: z.string().nullable(),
});

export const TestWebhookResponse = z.object({
  ok: z.literal(true),
  delivered: z.boolean().describe('True when the receiver answered 2xx'),
  responseStatus: z.number().int().nullable(),
  responseBody: z.string().nullable().describe('First 500 bytes of the response body'),
  networkError: z.string().nullable(),
  sentAt: dateTime(),
  signaturePreview: z
    .string()
    .describe('The X-Service-Signature value sent (v1=...; one value per live secret during a rotation overlap)'),
});

export const RotateSecretResponse = z.object({
  ok: z.literal(true),
  subscriptionId: z.string(),
  secret: z.string().describe('The new signing secret, returned only by this call'),
  secretWarning: z.string(),
  rotatedAt: dateTime(),
  previousSecretExpiresAt: dateTime()
    .nullable()
    .describe('Until then deliveries carry a signature with the replaced secret too; null with overlapSeconds 0'),
});

export const ResendDeliveryResponse = z.object({
  ok: z.literal(true),
  requeued: z.boolean().describe('false when the delivery was already queued to go now or in flight (nothing changed)'),
  delivery: WebhookDeliveryRow,
});

export const RecoverResponse = z.object({
  ok: z.literal(true),
  requeued: z.number().int().describe('FAILED or ABANDONED deliveries of the window re-queued by this call'),
  since: dateTime(),
  until: dateTime().describe('The end of the window used (now when not given): send it again with nextCursor'),
  nextCursor: z
    .string()
    .nullable()
    .describe('Non-null when this call stopped at its cap of 1,000: call again with the same window and this cursor'),
});

// ---- mapping

export function toWebhookRow(s: WebhookSubscription): z.input<typeof WebhookRow> {
  return {
    id: s.id,
    url: s.url,
    events: s.events,
    description: s.description,
    active: s.active,
    disabledReason: s.active ? null : s.disabledReason,
    disabledAt: s.active ? null : iso(s.disabledAt),
    failingSince: iso(s.failingSince),
    previousSecretExpiresAt: iso(s.previousSecretExpiresAt),
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function toDeliveryRow(d: WebhookDelivery): z.input<typeof WebhookDeliveryRow> {
  return {
    id: d.id,
    eventId: d.eventId,
    event: d.eventType,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === 'PENDING' || d.status === 'FAILED' ? iso(d.nextAttemptAt) : null,
    lastAttemptAt: iso(d.lastAttemptAt),
    deliveredAt: iso(d.deliveredAt),
    responseStatus: d.responseStatus,
    responseBody: d.responseBody,
    error: d.error,
    requeues: Array.isArray(d.requeues) ? (d.requeues as z.input<typeof RequeueEntry>[]) : [],
    createdAt: d.createdAt.toISOString(),
  };
}
