import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateWebhookBody,
  CreateWebhookResponse,
  DeleteWebhookResponse,
  DeliveryParams,
  ListDeliveriesQuery,
  ListDeliveriesResponse,
  ListWebhooksQuery,
  ListWebhooksResponse,
  RecoverBody,
  RecoverResponse,
  ResendDeliveryResponse,
  RotateSecretBody,
  RotateSecretResponse,
  TestWebhookResponse,
  UpdateWebhookBody,
  WebhookDetailResponse,
} from './webhooks.schemas.ts';

export const webhookRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const webhooks = services.webhooks;
    const recovery = services.webhookRecovery;
    const tags = ['webhooks'];
    const secretUnavailable = ErrorResponse.describe(
      'webhook_secret_unavailable: the stored secret cannot be opened (its encryption key is not configured, or the ciphertext was altered); the message names the key id',
    );
    const inactive = ErrorResponse.describe(
      'webhook_inactive: the subscription is paused or was disabled; re-enable it with PATCH active: true first',
    );

    app.get(
      '/webhooks',
      {
        config: { scope: 'events:read' },
        schema: {
          operationId: 'listWebhooks',
          tags,
          summary: 'List webhook subscriptions, newest first (secrets are never shown)',
          querystring: ListWebhooksQuery,
          response: { 200: ListWebhooksResponse },
        },
      },
      (req) => webhooks.list(contextOf(req), req.query),
    );

    app.post(
      '/webhooks',
      {
        config: { scope: 'events:write' },
        schema: {
          operationId: 'createWebhook',
          tags,
          summary: 'Subscribe an HTTPS endpoint to event types; returns the signing secret once',
          body: CreateWebhookBody,
          response: { 201: CreateWebhookResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await webhooks.create(contextOf(req), req.body)),
    );

    app.get(
      '/webhooks/:id',
      {
        config: { scope: 'events:read' },
        schema: {
          operationId: 'getWebhook',
          tags,
          summary: 'Webhook subscription detail',
          params: IdParams,
          response: { 200: WebhookDetailResponse },
        },
      },
      (req) => webhooks.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/webhooks/:id',
      {
        config: { scope: 'events:write' },
        schema: {
          operationId: 'updateWebhook',
          tags,
          summary: 'Change url, events, description or active; the secret is kept',
          params: IdParams,
          body: UpdateWebhookBody,
          response: { 200: WebhookDetailResponse },
        },
      },
      (req) => webhooks.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/webhooks/:id',
      {
        config: { scope: 'events:write' },
        schema: {
          operationId: 'deleteWebhook',
          tags,
          summary: 'Delete a subscription; its queued deliveries are never sent',
          params: IdParams,
          response: { 200: DeleteWebhookResponse },
        },
      },
      (req) => webhooks.remove(contextOf(req), req.params.id),
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        config: { scope: 'events:read' },
        schema: {
          operationId: 'listWebhookDeliveries',
          tags,
          summary: 'Delivery history, newest first (kept 30 days; test sends are not listed)',
          params: IdParams,
          querystring: ListDeliveriesQuery,
          response: { 200: ListDeliveriesResponse },
        },
      },
      (req) => webhooks.deliveries(contextOf(req), req.params.id, req.query),
    );

    app.post(
      '/webhooks/:id/test',
      {
        // Sends over the network for up to WEBHOOK_TIMEOUT_MS: never inside a held transaction.
        config: { scope: 'events:write', idempotency: 'outside-transaction' },
        schema: {
          operationId: 'testWebhook',
          tags,
          summary: 'Send a signed synthetic flag.created now (X-Service-Test: 1); not queued, not recorded',
          params: IdParams,
          response: { 200: TestWebhookResponse, 409: secretUnavailable },
        },
      },
      (req) => webhooks.test(contextOf(req), req.params.id),
    );

    app.post(
      '/webhooks/:id/rotate-secret',
      {
        config: { scope: 'events:write' },
        schema: {
          operationId: 'rotateWebhookSecret',
          tags,
          summary:
            'Replace the signing secret; the old one keeps signing beside it for overlapSeconds (default 24 h, max 7 days)',
          params: IdParams,
          body: RotateSecretBody,
          response: { 200: RotateSecretResponse, 409: secretUnavailable },
        },
      },
      (req) => webhooks.rotateSecret(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/webhooks/:id/deliveries/:deliveryId/resend',
      {
        config: { scope: 'events:write' },
        schema: {
          operationId: 'resendWebhookDelivery',
          tags,
          summary: 'Queue a delivery again now (same envelope id); one already due or in flight is left as it is',
          params: DeliveryParams,
          response: { 200: ResendDeliveryResponse, 409: inactive },
        },
      },
      (req) => recovery.resend(contextOf(req), req.params.id, req.params.deliveryId),
    );

    app.post(
      '/webhooks/:id/recover',
      {
        config: { scope: 'events:write' },
        schema: {
          operationId: 'recoverWebhook',
          tags,
          summary:
            'Re-queue every FAILED or ABANDONED delivery created in a window (1,000 per call; nextCursor continues)',
          params: IdParams,
          body: RecoverBody,
          response: { 200: RecoverResponse, 409: inactive },
        },
      },
      (req) => recovery.recover(contextOf(req), req.params.id, req.body),
    );
  };
