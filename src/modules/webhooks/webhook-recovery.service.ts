import type { RequestContext } from '../../core/context.ts';
import { conflict, fieldError, notFound } from '../../core/errors.ts';
import { decodeCursor, encodeCursor, timeIdCursor } from '../../core/pagination.ts';
import { signalQueued } from '../../events/outbox.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { createWebhookRepository } from './webhooks.repository.ts';
import { RECOVER_BATCH, toDeliveryRow, type RecoverInput } from './webhooks.schemas.ts';

const DAY_SEC = 86_400;
/** Deliveries abandoned per statement when a subscription is disabled: well inside the statement timeout. */
const ABANDON_BATCH = 5_000;
const AUTO_DISABLED = 'disabled automatically';

/** "5 days", "36 hours", "90 seconds": the period as people say it. */
export function describePeriod(sec: number): string {
  const [n, unit] =
    sec % DAY_SEC === 0 ? [sec / DAY_SEC, 'day'] : sec % 3600 === 0 ? [sec / 3600, 'hour'] : [sec, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * Getting missed events to a receiver again: resend one delivery, recover a window of failed ones, and the
 * job that disables endpoints failing for too long. Re-queues keep the delivery row (its id is the envelope
 * id receivers deduplicate on) and log themselves in its `requeues`.
 */
export function createWebhookRecoveryService({
  db,
  config,
  clock,
  log,
}: Pick<ServiceDeps, 'db' | 'config' | 'clock' | 'log'>) {
  const repository = createWebhookRepository(db);

  /** The subscription of the caller's organisation; re-queueing for an inactive one is refused (409). */
  async function activeSubscription(ctx: RequestContext, id: string) {
    const subscription = await db.prisma.webhookSubscription.findFirst({
      where: { id, orgId: ctx.orgId },
      select: { id: true, active: true, disabledReason: true },
    });
    if (!subscription) throw notFound('Webhook subscription');
    if (!subscription.active)
      throw conflict(
        'webhook_inactive',
        `The subscription is inactive (${subscription.disabledReason ?? 'paused'}): nothing would be sent. ` +
          'Re-enable it with PATCH active: true first.',
      );
    return subscription;
  }

  /** Abandons the queued deliveries of just-disabled subscriptions, ABANDON_BATCH rows per statement. */
  async function abandonQueued(subscriptionIds: string[]): Promise<Map<string, number>> {
    const total = new Map<string, number>();
    if (subscriptionIds.length === 0) return total;
    for (;;) {
      const { picked, moved } = await repository.abandonQueued(subscriptionIds, ABANDON_BATCH);
      for (const m of moved) total.set(m.subscriptionId, (total.get(m.subscriptionId) ?? 0) + m.n);
      if (picked < ABANDON_BATCH) return total;
    }
  }

  return {
    /** Queues one delivery again now; a delivery already due or in flight is left as it is (requeued: false). */
    async resend(ctx: RequestContext, id: string, deliveryId: string) {
      await activeSubscription(ctx, id);
      const row = await repository.resend(ctx.orgId, id, deliveryId, {
        at: clock.now(),
        via: 'resend',
        actorId: ctx.actorId,
      });
      if (!row) throw notFound('Webhook delivery');
      if (row.requeued) signalQueued(); // this process at once; others through the statement's pg_notify
      return { ok: true as const, requeued: row.requeued, delivery: toDeliveryRow(row) };
    },

    /**
     * Re-queues the FAILED and ABANDONED deliveries created in [since, until), at most RECOVER_BATCH per call
     * (one short statement); nextCursor continues the same window.
     */
    async recover(ctx: RequestContext, id: string, input: RecoverInput) {
      const now = clock.now();
      const until = input.until ?? now;
      if (until.getTime() <= input.since.getTime()) throw fieldError('until', 'must be after since');
      const after = timeIdCursor(decodeCursor(input.cursor, 2));
      await activeSubscription(ctx, id);
      const result = await repository.recover(
        ctx.orgId,
        id,
        { since: input.since, until, after, limit: RECOVER_BATCH },
        { at: now, via: 'recover', actorId: ctx.actorId },
      );
      if (result.requeued > 0) {
        signalQueued();
        log.info({ subscriptionId: id, orgId: ctx.orgId, requeued: result.requeued }, 'webhook deliveries recovered');
      }
      const more = result.picked >= RECOVER_BATCH && result.lastAt !== null && result.lastId !== null;
      return {
        ok: true as const,
        requeued: result.requeued,
        since: input.since.toISOString(),
        until: until.toISOString(),
        nextCursor: more ? encodeCursor([new Date(result.lastAt!).toISOString(), result.lastId]) : null,
      };
    },

    /**
     * The auto-disable job: a subscription whose every attempt failed for WEBHOOK_AUTO_DISABLE_AFTER_SEC
     * (default 5 days), and that failed again within the last day (or the period, when shorter), is disabled.
     */
    async disableFailing(now = clock.now()) {
      const periodSec = config.webhooks.autoDisableAfterSec;
      if (periodSec <= 0) return [];
      const recentSec = Math.min(DAY_SEC, periodSec);
      const disabled = await repository.disableFailing(
        now,
        new Date(now.getTime() - periodSec * 1000),
        new Date(now.getTime() - recentSec * 1000),
        `${AUTO_DISABLED}: every delivery attempt failed for ${describePeriod(periodSec)}`,
      );
      // Also the backlog of any earlier run that stopped between disabling and abandoning (a crash, a restart).
      const unfinished = await repository.disabledWithBacklog(AUTO_DISABLED);
      const abandoned = await abandonQueued([...new Set([...disabled.map((d) => d.id), ...unfinished])]);
      const result = disabled.map((d) => ({ ...d, abandoned: abandoned.get(d.id) ?? 0 }));
      for (const d of result)
        log.warn(
          { subscriptionId: d.id, orgId: d.orgId, abandoned: d.abandoned },
          'webhook subscription disabled: its endpoint failed every delivery for the whole period',
        );
      return result;
    },
  };
}

export type WebhookRecoveryService = ReturnType<typeof createWebhookRecoveryService>;
