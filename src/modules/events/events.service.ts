import type { RequestContext } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import { decodeCursor, newestFirstKey, paginate, timeIdCursor } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { findEvent, listEvents } from './events.repository.ts';
import { toFeedEvent, type ListEventsInput } from './events.schemas.ts';

/**
 * The event feed: every event the organisation emitted (the outbox the webhooks are delivered from), kept as
 * long as delivery history. Read-only; integrators poll it instead of, or beside, webhooks.
 */
export function createEventService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(ctx: RequestContext, query: ListEventsInput) {
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await listEvents(db.sql, ctx.orgId, query, after);
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, events: page.map(toFeedEvent), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      const row = await findEvent(db.sql, ctx.orgId, id);
      if (!row) throw notFound('Event');
      return { ok: true as const, event: toFeedEvent(row) };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
