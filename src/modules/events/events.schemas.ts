import { z } from 'zod';
import { EVENT_TYPES, isEventType } from '../../events/catalog.ts';
import { cursorQuery, dateTime, dateTimeInput, limitQuery } from '../../core/schemas.ts';

// ---- requests

/**
 * CSV of event types. Unknown names are ignored (the spec's rule for CSV filters, and a name a later version
 * adds is not an error for an older server); a filter naming only unknown types matches nothing.
 */
const typeFilter = z
  .string()
  .max(2000)
  .optional()
  .transform((s) =>
    s === undefined || s.trim() === ''
      ? null
      : [...new Set(s.split(',').map((v) => v.trim()))].filter((v) => isEventType(v)),
  )
  .describe(`Comma-separated event types; unknown names are ignored. Known: ${EVENT_TYPES.join(', ')}`);

export const ListEventsQuery = z
  .object({
    limit: limitQuery,
    cursor: cursorQuery,
    type: typeFilter,
    since: dateTimeInput().optional().describe('Only events created at or after this time'),
    until: dateTimeInput().optional().describe('Only events created before this time'),
  })
  .superRefine((q, ctx) => {
    if (q.since && q.until && q.since > q.until)
      ctx.addIssue({ code: 'custom', path: ['until'], message: 'must not be before since' });
  });
export type ListEventsInput = z.output<typeof ListEventsQuery>;

// ---- responses

export const FeedEvent = z
  .object({
    id: z.string().describe('The event id; webhook deliveries of this event carry it as `eventId`'),
    event: z.string().describe(`Event type, one of: ${EVENT_TYPES.join(', ')}`),
    organizationId: z.string(),
    createdAt: dateTime().describe('When the change that emitted the event committed its transaction (start time)'),
    data: z
      .record(z.string(), z.unknown())
      .describe("The event's payload, exactly the `data` of its webhook deliveries (schemas in asyncapi.yaml)"),
  })
  .meta({ id: 'FeedEvent' });

export const ListEventsResponse = z.object({
  ok: z.literal(true),
  events: z.array(FeedEvent),
  nextCursor: z.string().nullable(),
});

export const EventDetailResponse = z.object({ ok: z.literal(true), event: FeedEvent });

export interface EventRow {
  id: string;
  orgId: string;
  type: string;
  data: unknown;
  createdAt: Date;
}

export const toFeedEvent = (e: EventRow) => ({
  id: e.id,
  event: e.type,
  organizationId: e.orgId,
  createdAt: e.createdAt.toISOString(),
  data: e.data as Record<string, unknown>,
});
