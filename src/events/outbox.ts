import { randomUUID } from 'node:crypto';
import { afterCommit, type Tx } from '../db/transaction.ts';
import { eventCatalog, type EventData, type EventType } from './catalog.ts';

/** PostgreSQL channel notified (on commit only) when deliveries are queued: wakes every instance's dispatcher. */
export const DELIVERIES_CHANNEL = 'fleet_webhook_deliveries';

const queuedListeners = new Set<() => void>();

/** In-process wake-up: `listener` runs after a transaction that queued deliveries commits. Returns unsubscribe. */
export function onDeliveriesQueued(listener: () => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

function signalQueued() {
  for (const listener of queuedListeners) listener();
}

/**
 * Records an event in the outbox inside the caller's transaction, with one delivery row per active
 * subscription of the organisation that lists the type. Committed with the change or not at all, so a
 * crash can delay a webhook but never lose or invent one. When rows were queued, the same statement
 * NOTIFYs the dispatchers (PostgreSQL sends it at commit, and never for a rollback).
 */
export async function emit<T extends EventType>(tx: Tx, orgId: string, type: T, data: EventData<T>): Promise<string> {
  const payload = eventCatalog[type].data.parse(data);
  const eventId = randomUUID();
  await tx.event.create({ data: { id: eventId, orgId, type, data: payload as object } });
  const notified = await tx.$queryRaw<unknown[]>`
    WITH queued AS (
      INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
      SELECT gen_random_uuid()::text, s."orgId", s.id, ${eventId}, ${type}
      FROM webhook_subscriptions s
      WHERE s."orgId" = ${orgId} AND s.active AND ${type} = ANY (s.events)
      RETURNING 1
    )
    SELECT pg_notify(${DELIVERIES_CHANNEL}, '')::text AS n FROM (SELECT 1 FROM queued LIMIT 1) q`;
  if (notified.length > 0) afterCommit(tx, signalQueued);
  return eventId;
}
