import { z } from 'zod';
import type { WebhookDelivery, WebhookSubscription } from '../../generated/prisma/client.ts';
import { EVENT_TYPES } from '../../events/catalog.ts';
import { csvEnum, cursorQuery, dateTime, iso, limitQuery, optionalText } from '../../core/schemas.ts';

export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'ABANDONED'] as const;

export const SECRET_WARNING =
  'Store this secret now: it is shown only this once and cannot be retrieved or rotated later. ' +
  'Use it to verify the X-Service-Signature of every delivery; to change it, delete the subscription and create a new one.';

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
    active: z.boolean().optional().describe('false pauses deliveries; queued ones wait until it is true again'),
  })
  .describe('Any subset of the fields; the secret is kept')
  .meta({ minProperties: 1 });
export type UpdateWebhookInput = z.output<typeof UpdateWebhookBody>;

export const ListWebhooksQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

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
    error: z.string().nullable().describe('Why the last attempt failed'),
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
  signaturePreview: z.string().describe('The X-Service-Signature value sent (v1=...)'),
});

// ---- mapping

export function toWebhookRow(s: WebhookSubscription): z.input<typeof WebhookRow> {
  return {
    id: s.id,
    url: s.url,
    events: s.events,
    description: s.description,
    active: s.active,
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
    createdAt: d.createdAt.toISOString(),
  };
}
