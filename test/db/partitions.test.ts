import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPartitions, maintainPartitions, monthStart, ensureMonths } from '../../src/db/partitions.ts';
import { listEvents } from '../../src/modules/events/events.repository.ts';
import { ListEventsQuery } from '../../src/modules/events/events.schemas.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { plansOf, scansOf } from '../helpers/db/query-plans.ts';

/** The monthly partitions' upkeep, the delivery → event reference across them, and the feed's pruning. */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.exec(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-p', 'P', 'p');
     INSERT INTO webhook_subscriptions (id, "orgId", url, events, secret)
       VALUES ('sub-p', 'org-p', 'https://receiver.example/hook', '{asset.created}', 'whsec_p')`,
  );
});
afterAll(() => db.close());

const names = async (table: 'meter_logs' | 'events' | 'webhook_deliveries') =>
  (await listPartitions(db.sql, table)).map((p) => p.name);
const monthName = (table: string, at: Date) =>
  `${table}_${at.getUTCFullYear()}_${String(at.getUTCMonth() + 1).padStart(2, '0')}`;

describe('monthly partitions', () => {
  it('keeps the current month and three ahead for every table, idempotently', async () => {
    const now = new Date();
    await maintainPartitions(db, now);
    expect(await maintainPartitions(db, now)).toEqual([]);
    for (const table of ['meter_logs', 'events', 'webhook_deliveries'] as const) {
      const have = await names(table);
      for (let k = 0; k <= 3; k++) expect(have).toContain(monthName(table, monthStart(now, k)));
    }
    expect(await names('meter_logs')).toContain(monthName('meter_logs', monthStart(now, -1)));
  });

  it("fills a delivery's eventCreatedAt when its writer leaves it out, and an event's delete cascades", async () => {
    const old = new Date(Date.UTC(2025, 4, 20, 9));
    await ensureMonths(db, 'events', [old]);
    // As the previous release writes: the event and its delivery in one statement, without eventCreatedAt; and a
    // delivery of an older event.
    await db.sql.exec(
      `WITH e AS (INSERT INTO events (id, "orgId", type, data) VALUES ('evt-now', 'org-p', 'asset.created', '{}') RETURNING id)
       INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
       SELECT 'del-now', 'org-p', 'sub-p', id, 'asset.created' FROM e`,
    );
    await db.sql.query(
      `INSERT INTO events (id, "orgId", type, data, "createdAt") VALUES ('evt-old', 'org-p', 'asset.created', '{}', $1)`,
      [old],
    );
    await db.sql.exec(
      `INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
       VALUES ('del-old', 'org-p', 'sub-p', 'evt-old', 'asset.created')`,
    );
    const rows = await db.sql.query<{ id: string; same: boolean }>(
      `SELECT d.id, d."eventCreatedAt" = e."createdAt" AS same FROM webhook_deliveries d
       JOIN events e ON e.id = d."eventId" WHERE d."orgId" = 'org-p' ORDER BY d.id`,
    );
    expect(rows).toEqual([
      { id: 'del-now', same: true },
      { id: 'del-old', same: true },
    ]);
    await db.sql.exec(`DELETE FROM events WHERE id = 'evt-old'`);
    expect(await db.sql.query(`SELECT id FROM webhook_deliveries WHERE id = 'del-old'`)).toEqual([]);
    // A delivery naming no event is refused, as before.
    await expect(
      db.sql.exec(
        `INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", "eventCreatedAt")
         VALUES ('del-none', 'org-p', 'sub-p', 'evt-none', 'asset.created', now())`,
      ),
    ).rejects.toThrow(/foreign key/);
  });

  it('reads only the months an event feed page names', async () => {
    const months = [new Date(Date.UTC(2025, 0, 10)), new Date(Date.UTC(2025, 1, 10)), new Date(Date.UTC(2025, 2, 10))];
    await ensureMonths(db, 'events', months);
    const query = ListEventsQuery.parse({ since: '2025-02-01T00:00:00.000Z', until: '2025-03-01T00:00:00.000Z' });
    const [plan] = await plansOf(db, (sql) => listEvents(sql, 'org-p', query, null));
    expect(scansOf(plan, 'events').map((s) => s.Partition)).toEqual(['events_2025_02']);
  });
});
