import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: webhook subscriptions and deliveries, in order. */
export const WEBHOOK_STEPS: Step[] = [
  // Webhooks. `webhookUrl` must be an https URL the server may call (see the collection's variables).
  {
    operationId: 'createWebhook',
    body: { url: '{{webhookUrl}}', events: ['flag.created', 'tool.low_stock'], description: 'Dispatch board' },
    status: 201,
    save: { webhookId: 'subscriptionId' },
    checks: [okTrue, str('subscriptionId'), str('secret')],
  },
  {
    operationId: 'createFlag',
    name: 'Raise a flag the webhook receives (queues a delivery)',
    body: { assetId: '{{assetId}}', severity: 'YELLOW', note: 'Seat belt frayed' },
    status: 201,
    checks: [okTrue],
  },
  { operationId: 'listWebhooks', status: 200, checks: [okTrue] },
  { operationId: 'getWebhook', params: { id: '{{webhookId}}' }, status: 200, checks: [okTrue] },
  {
    operationId: 'listWebhookDeliveries',
    params: { id: '{{webhookId}}' },
    query: { limit: '10' },
    status: 200,
    save: { deliveryId: 'deliveries.0.id' },
    checks: [okTrue, str('deliveries.0.id'), is('deliveries.0.event', 'flag.created')],
  },
  {
    operationId: 'resendWebhookDelivery',
    params: { id: '{{webhookId}}', deliveryId: '{{deliveryId}}' },
    status: 200,
    checks: [okTrue, { path: 'requeued', type: 'boolean' }, is('delivery.id', '{{deliveryId}}')],
  },
  {
    operationId: 'recoverWebhook',
    params: { id: '{{webhookId}}' },
    body: { since: '2026-01-01T00:00:00Z' },
    status: 200,
    checks: [okTrue, { path: 'requeued', type: 'number' }, is('nextCursor', null)],
  },
  {
    operationId: 'rotateWebhookSecret',
    params: { id: '{{webhookId}}' },
    body: { overlapSeconds: 3600 },
    status: 200,
    checks: [okTrue, str('secret'), str('previousSecretExpiresAt')],
  },
  {
    operationId: 'updateWebhook',
    params: { id: '{{webhookId}}' },
    body: { description: 'Dispatch board (paused)', active: false },
    status: 200,
    checks: [okTrue, is('webhook.active', false), str('webhook.disabledReason')],
  },
  {
    operationId: 'testWebhook',
    params: { id: '{{webhookId}}' },
    body: {},
    status: 200,
    checks: [okTrue, { path: 'delivered', type: 'boolean' }, str('signaturePreview')],
  },
];
