import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/transaction.ts';
import { eventCatalog, type EventData, type EventType } from './catalog.ts';

/**
 * Records an event in the outbox inside the caller's transaction, with one delivery row per active
 * subscription of the organisation that lists the type. Committed with the change or not at all, so a
 * crash can delay a webhook but never lose or invent one.
 */
export async function emit<T extends EventType>(tx: Tx, orgId: string, type: T, data: EventData<T>): Promise<string> {
  const payload = eventCatalog[type].data.parse(data);
  const eventId = randomUUID();
  await tx.event.create({ data: { id: eventId, orgId, type, data: payload as object } });
  await tx.$executeRaw`
    INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
    SELECT gen_random_uuid()::text, s."orgId", s.id, ${eventId}, ${type}
    FROM webhook_subscriptions s
    WHERE s."orgId" = ${orgId} AND s.active AND ${type} = ANY (s.events)`;
  return eventId;
}
