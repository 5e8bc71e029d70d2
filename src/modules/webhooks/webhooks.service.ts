import { randomUUID } from 'node:crypto';
import type { Prisma, WebhookDelivery, WebhookSubscription } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import { EVENT_TYPES, isEventType } from '../../events/catalog.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import {
  decodeCursor,
  keysetSql,
  newestFirstAfter,
  newestFirstKey,
  newestFirstOrder,
  NEWEST_FIRST,
  paginate,
  timeIdCursor,
} from '../../core/pagination.ts';
import { EVENT_EXAMPLES } from '../../delivery/event-examples.ts';
import { firstBytes } from '../../delivery/sender.ts';
import { SecretUnavailableError } from '../../security/secret-box.ts';
import { newWebhookSecret, signEnvelope } from '../../delivery/signer.ts';
import { checkWebhookUrl } from '../../security/url-guard.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import {
  DEFAULT_OVERLAP_SEC,
  DELIVERY_STATUSES,
  SECRET_WARNING,
  toDeliveryRow,
  toWebhookRow,
  UPDATABLE_FIELDS,
  type CreateWebhookInput,
  type RotateSecretInput,
  type UpdateWebhookInput,
} from './webhooks.schemas.ts';
import { createWebhookSecretStore } from './webhook-secrets.repository.ts';

/** The reason shown while a subscription is paused through the API. */
export const PAUSED_REASON = 'paused with PATCH active: false';

/** A secret that cannot be opened, as the API reports it (the reason names a key id, never key material). */
async function unavailable<T>(fn: () => T | Promise<T>, hint: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof SecretUnavailableError)) throw err;
    throw conflict(
      'webhook_secret_unavailable',
      `The subscription's signing secret cannot be used: ${err.message}. ${hint}`,
    );
  }
}

/** Known event names from the request, in catalog order, without duplicates; unknown names are dropped. */
function acceptedEvents(names: string[]): string[] {
  const wanted = new Set(names.filter(isEventType));
  return EVENT_TYPES.filter((t) => wanted.has(t));
}

export function createWebhookService({
  db,
  config,
  clock,
  log,
  webhookSender: sender,
  secretBox,
}: Pick<ServiceDeps, 'db' | 'config' | 'clock' | 'log' | 'webhookSender' | 'secretBox'>) {
  const secrets = createWebhookSecretStore(db, secretBox);
  /** Checks url and events together so one 422 reports every problem; returns the values to store. */
  async function validated(input: { url?: string; events?: string[] }) {
    const fieldErrors: Record<string, string> = {};
    const events = input.events === undefined ? undefined : acceptedEvents(input.events);
    // Spec: unknown names are silently dropped, even when none is left; the response lists what was accepted.
    if (input.url !== undefined) {
      const problem = await checkWebhookUrl(input.url, {
        allowPrivateNetworks: config.webhooks.allowPrivateNetworks,
        debug: (why) => log.debug({ why }, 'webhook URL refused'),
      });
      if (problem) fieldErrors.url = problem;
    }
    if (Object.keys(fieldErrors).length > 0) throw new ValidationError(fieldErrors);
    return { events, url: input.url === undefined ? undefined : new URL(input.url).toString() };
  }

  async function findOwned(tx: Tx, ctx: RequestContext, id: string): Promise<WebhookSubscription> {
    const subscription = await tx.webhookSubscription.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!subscription) throw notFound('Webhook subscription');
    return subscription;
  }

  async function detail(ctx: RequestContext, subscription: WebhookSubscription) {
    const groups = await db.prisma.webhookDelivery.groupBy({
      by: ['status'],
      where: { orgId: ctx.orgId, subscriptionId: subscription.id },
      _count: { _all: true },
    });
    const deliveryCounts = Object.fromEntries(
      DELIVERY_STATUSES.map((s) => [s, groups.find((g) => g.status === s)?._count._all ?? 0]),
    ) as Record<(typeof DELIVERY_STATUSES)[number], number>;
    return { ok: true as const, webhook: { ...toWebhookRow(subscription), deliveryCounts } };
  }

  return {
    async create(ctx: RequestContext, input: CreateWebhookInput) {
      const { url, events } = await validated(input);
      const secret = newWebhookSecret();
      // The id is chosen here: the ciphertext is bound to it.
      const id = randomUUID();
      const created = await db.prisma.webhookSubscription.create({
        data: {
          id,
          orgId: ctx.orgId,
          url: url!,
          events: events!,
          description: input.description ?? null,
          secretCiphertext: secretBox.sealSecret(id, 'current', secret),
        },
      });
      return {
        ok: true as const,
        subscriptionId: created.id,
        secret,
        secretWarning: SECRET_WARNING,
        events: created.events,
        url: created.url,
        description: created.description,
        active: created.active,
        createdAt: created.createdAt.toISOString(),
      };
    },

    async list(ctx: RequestContext, query: { limit: number; cursor?: string }) {
      const rows = await db.prisma.webhookSubscription.findMany({
        where: { orgId: ctx.orgId, ...newestFirstAfter(decodeCursor(query.cursor, 2)) },
        orderBy: newestFirstOrder,
        take: query.limit + 1,
      });
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, webhooks: page.map(toWebhookRow), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      return detail(ctx, await findOwned(db.prisma, ctx, id));
    },

    async update(ctx: RequestContext, id: string, patch: UpdateWebhookInput) {
      if (UPDATABLE_FIELDS.every((f) => patch[f] === undefined)) {
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      }
      // The URL check may wait on DNS: before any query, so it never runs inside a request's transaction.
      const { url, events } = await validated(patch);
      await findOwned(db.prisma, ctx, id);
      const data: Prisma.WebhookSubscriptionUpdateInput = {};
      if (events !== undefined) data.events = events;
      if (url !== undefined) data.url = url;
      if (patch.description !== undefined) data.description = patch.description;
      const updated = await transaction(db, async (tx) => {
        const current = await findOwned(tx, ctx, id);
        if (patch.active === true && !current.active) {
          // Re-enabled: the reason goes, and endpoint health starts afresh (old failures must not disable it
          // again at the first new one).
          Object.assign(data, {
            active: true,
            disabledReason: null,
            disabledAt: null,
            failingSince: null,
            lastFailureAt: null,
          });
        } else if (patch.active === false && current.active) {
          Object.assign(data, { active: false, disabledReason: PAUSED_REASON, disabledAt: clock.now() });
        }
        return tx.webhookSubscription.update({ where: { id }, data });
      });
      return detail(ctx, updated);
    },

    /** Deleting cascades to the subscription's deliveries: queued ones are never sent, its history goes too. */
    async remove(ctx: RequestContext, id: string) {
      const { count } = await db.prisma.webhookSubscription.deleteMany({ where: { id, orgId: ctx.orgId } });
      if (count === 0) throw notFound('Webhook subscription');
      return { ok: true as const, subscriptionId: id, deleted: true as const };
    },

    async deliveries(
      ctx: RequestContext,
      id: string,
      query: { status: (typeof DELIVERY_STATUSES)[number][]; limit: number; cursor?: string },
    ) {
      await findOwned(db.prisma, ctx, id);
      // One range per requested status on webhook_deliveries(subscriptionId, status, createdAt, id).
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const { text, params } = keysetSql({
        from: 'webhook_deliveries',
        where: ['"orgId" = $1', '"subscriptionId" = $2'],
        params: [ctx.orgId, id],
        order: NEWEST_FIRST,
        direction: 'desc',
        after: after ? [after[0].toISOString(), after[1]] : null,
        take: query.limit + 1,
        split: { column: 'status', values: query.status },
      });
      const rows = await db.sql.query<WebhookDelivery>(text, params);
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, deliveries: page.map(toDeliveryRow), nextCursor };
    },

    /**
     * A new secret, returned once. The replaced one keeps signing beside it for `overlapSeconds` (default 24 h;
     * 0 retires it at once), so receivers can switch without losing a delivery.
     */
    async rotateSecret(ctx: RequestContext, id: string, input: RotateSecretInput) {
      const overlap = input?.overlapSeconds ?? DEFAULT_OVERLAP_SEC;
      const now = clock.now();
      const secret = newWebhookSecret();
      const expiresAt = overlap > 0 ? new Date(now.getTime() + overlap * 1000) : null;
      const rotated = await unavailable(
        () => secrets.rotate(ctx.orgId, id, secret, expiresAt),
        'Rotate with overlapSeconds 0 to replace it without an overlap, or restore the key',
      );
      if (!rotated) throw notFound('Webhook subscription');
      return {
        ok: true as const,
        subscriptionId: id,
        secret,
        secretWarning: SECRET_WARNING,
        rotatedAt: now.toISOString(),
        previousSecretExpiresAt: expiresAt?.toISOString() ?? null,
      };
    },

    /**
     * Sends a synthetic flag.created right now, signed like a real delivery (every live secret); nothing is
     * queued or recorded.
     */
    async test(ctx: RequestContext, id: string) {
      const subscription = await findOwned(db.prisma, ctx, id);
      const now = clock.now();
      const data = {
        ...EVENT_EXAMPLES['flag.created'],
        raisedBy: { userId: ctx.actorId, name: null },
        raisedAt: now.toISOString(),
      };
      const keys = await unavailable(
        () => secretBox.liveSecrets(subscription.id, subscription, now),
        'Restore the key in SECRETS_ENCRYPTION_KEYS, or rotate the secret with overlapSeconds 0',
      );
      const signed = signEnvelope(
        keys,
        {
          id: `test_${randomUUID()}`,
          eventId: `test_${randomUUID()}`,
          event: 'flag.created',
          organizationId: ctx.orgId,
          data,
        },
        { now, test: true },
      );
      const result = await sender.send(subscription.url, signed.body, signed.headers);
      return {
        ok: true as const,
        delivered: result.ok,
        responseStatus: result.status,
        responseBody: firstBytes(result.bodyPrefix),
        networkError: result.status === null ? result.error : null,
        sentAt: signed.sentAt.toISOString(),
        signaturePreview: signed.signature,
      };
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
