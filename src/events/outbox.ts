import { randomUUID } from 'node:crypto';
import { afterCommit, runHooks, type Tx } from '../db/transaction.ts';
import { eventCatalog, type EventData, type EventType } from './catalog.ts';

/** PostgreSQL channel notified (on commit only) when deliveries are queued: wakes every instance's dispatcher. */
export const DELIVERIES_CHANNEL = 'fleet_webhook_deliveries';

const queuedListeners = new Set<() => void>();

/** In-process wake-up: `listener` runs after a transaction that queued deliveries commits. Returns unsubscribe. */
export function onDeliveriesQueued(listener: () => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

export function signalQueued() {
  // Inside an ambient transaction (an idempotent request) the rows are not committed yet: wake on its commit.
  runHooks([...queuedListeners]);
}

/** SQL expressions (placeholders or columns of `from`) for the outbox rows of one event. */
export interface OutboxSqlValues {
  eventId: string;
  orgId: string;
  type: string;
  /** A jsonb expression. */
  data: string;
  /** A CTE the event row is selected from (one row), when its data depends on an earlier CTE. */
  from?: string;
}

/**
 * The one text of the outbox write, shared by emit() and by the statements that fold
 * their change and its event into one round trip: CTEs `outbox_event` (the event) and `outbox_queued` (one
 * delivery per active subscription of the organisation listing the type). Follow them with a select list
 * holding OUTBOX_NOTIFIED, which NOTIFYs the dispatchers when rows were queued (PostgreSQL sends it at
 * commit, never for a rollback) and is non-null exactly then.
 */
export function outboxCtes(v: OutboxSqlValues): string {
  return `outbox_event AS (
      INSERT INTO events (id, "orgId", type, data)
      SELECT ${v.eventId}::text, ${v.orgId}::text, ${v.type}::text, ${v.data}${v.from ? ` FROM ${v.from}` : ''}
      RETURNING id, "orgId", type, "createdAt"
    ),
    outbox_queued AS (
      INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", "eventCreatedAt")
      SELECT gen_random_uuid()::text, s."orgId", s.id, e.id, e.type, e."createdAt"
      FROM outbox_event e JOIN webhook_subscriptions s ON s."orgId" = e."orgId" AND s.active AND e.type = ANY (s.events)
      RETURNING 1
    )`;
}

export const OUTBOX_NOTIFIED = `(SELECT pg_notify('${DELIVERIES_CHANNEL}', '')::text FROM (SELECT 1 FROM outbox_queued LIMIT 1) q) AS "outboxNotified"`;

const EMIT_SQL = `WITH ${outboxCtes({ eventId: '$1', orgId: '$2', type: '$3', data: '$4::jsonb' })} SELECT ${OUTBOX_NOTIFIED}`;

/** Validates an event's payload against the catalog and gives it an id: the parameters of the outbox rows. */
export function outboxEvent<T extends EventType>(type: T, data: EventData<T>): { eventId: string; payload: unknown } {
  return { eventId: randomUUID(), payload: eventCatalog[type].data.parse(data) };
}

/**
 * Records an event in the outbox inside the caller's transaction, with one delivery row per active
 * subscription of the organisation that lists the type. Committed with the change or not at all, so a
 * crash can delay a webhook but never lose or invent one.
 */
export async function emit<T extends EventType>(tx: Tx, orgId: string, type: T, data: EventData<T>): Promise<string> {
  const { eventId, payload } = outboxEvent(type, data);
  const [row] = await tx.$queryRawUnsafe<{ outboxNotified: string | null }[]>(
    EMIT_SQL,
    eventId,
    orgId,
    type,
    JSON.stringify(payload),
  );
  if (row?.outboxNotified != null) afterCommit(tx, signalQueued);
  return eventId;
}

/**
 * emit() for several events of one organisation in one statement (the flags one inspection raises): each is
 * validated against the catalog and gets its deliveries, as if emitted one by one in this order.
 */
export async function emitMany(
  tx: Tx,
  orgId: string,
  events: { [T in EventType]: { type: T; data: EventData<T> } }[EventType][],
): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => {
    const { eventId, payload } = outboxEvent(e.type, e.data as never);
    return { id: eventId, type: e.type, data: payload };
  });
  const sql = `WITH ${outboxCtes({
    eventId: 'e.id',
    orgId: '$1',
    type: 'e.type',
    data: 'e.data',
    from: 'jsonb_to_recordset($2::jsonb) AS e(id text, type text, data jsonb)',
  })} SELECT ${OUTBOX_NOTIFIED}`;
  const [row] = await tx.$queryRawUnsafe<{ outboxNotified: string | null }[]>(sql, orgId, JSON.stringify(rows));
  if (row?.outboxNotified != null) afterCommit(tx, signalQueued);
  return rows.map((r) => r.id);
}
