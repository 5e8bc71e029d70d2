import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrator.ts';
import { ConversionStopped, conversionPending, convertToPartitions } from '../../src/db/partition-conversion.ts';
import { listPartitions } from '../../src/db/partitions.ts';
import { pruneWebhookHistory } from '../../src/delivery/retention.ts';
import { findLogByKey } from '../../src/modules/hours/hours.repository.ts';
import { createTestDatabase, createUnmigratedDatabase, type TestDatabase } from '../helpers/db/test-database.ts';

/**
 * An installation that holds rows when it upgrades: the migrations leave its tables as they are, and the online
 * conversion turns each into the partitioned table with its history attached as one partition, while the previous
 * release's writes go on; interrupted, it resumes. The result has the new installation's keys, indexes and triggers.
 */
const PARTITIONS = '20261129150000_monthly_partitions';
const ROWS = 3_000;
let db: TestDatabase;
let fresh: TestDatabase;

beforeAll(async () => {
  db = await createUnmigratedDatabase();
  await migrate(
    db.sql,
    readMigrations().filter((m) => m.name < PARTITIONS),
  );
  await db.sql.exec(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-c', 'C', 'c');
     INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "updatedAt")
       VALUES ('asset-c', 'org-c', 'Loader', 'off-road', 'HOURS', 'h', now());
     INSERT INTO webhook_subscriptions (id, "orgId", url, events, secret)
       VALUES ('sub-c', 'org-c', 'https://receiver.example/hook', '{asset.created}', 'whsec_c');
     INSERT INTO events (id, "orgId", type, data, "createdAt")
       SELECT 'evt-' || n, 'org-c', 'asset.created', '{}', now() - make_interval(days => n % 90) FROM generate_series(1, ${ROWS}) n;
     INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", "createdAt")
       SELECT 'del-' || n, 'org-c', 'sub-c', 'evt-' || n, 'asset.created', now() - make_interval(days => n % 90)
       FROM generate_series(1, ${ROWS}) n;
     INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt", "clientMutationId")
       SELECT 'log-' || n, 'org-c', 'asset-c', n, 1, now() - make_interval(days => n % 700),
              CASE WHEN n % 3 = 0 THEN 'key-' || n END
       FROM generate_series(1, ${ROWS}) n`,
  );
  await migrate(db.sql);
  fresh = await createTestDatabase();
});
afterAll(async () => {
  await db?.close();
  await fresh?.close();
});

/** The previous release's writes: an event with its delivery in one statement, and a keyed reading. */
function writer() {
  let stop = false;
  let n = 0;
  const failures: unknown[] = [];
  const done = (async () => {
    while (!stop) {
      n++;
      try {
        await db.sql.exec(
          `WITH e AS (INSERT INTO events (id, "orgId", type, data) VALUES ('w-evt-${n}', 'org-c', 'asset.created', '{}') RETURNING id, type)
           INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
           SELECT 'w-del-${n}', 'org-c', 'sub-c', id, type FROM e;
           INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt", "clientMutationId")
           VALUES ('w-log-${n}', 'org-c', 'asset-c', ${ROWS + n}, 1, now(), 'w-key-${n}')`,
        );
      } catch (err) {
        failures.push(err);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      stop = true;
      await done;
      return { written: n - failures.length, failures };
    },
  };
}

const shape = async (d: TestDatabase) =>
  d.sql.query<{ kind: string; tbl: string; name: string; def: string }>(
    `SELECT 'index' AS kind, tablename AS tbl, indexname AS name, regexp_replace(indexdef, ' ON public\\.\\S+', '') AS def
       FROM pg_indexes WHERE tablename IN ('meter_logs', 'events', 'webhook_deliveries')
     UNION ALL
     SELECT 'constraint', conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
       WHERE conrelid IN ('meter_logs'::regclass, 'events'::regclass, 'webhook_deliveries'::regclass) AND conparentid = 0
     UNION ALL
     SELECT 'trigger', tgrelid::regclass::text, tgname, regexp_replace(pg_get_triggerdef(oid), ' ON public\\.\\S+', '')
       FROM pg_trigger WHERE tgrelid IN ('meter_logs'::regclass, 'events'::regclass, 'webhook_deliveries'::regclass)
         AND NOT tgisinternal
     ORDER BY 1, 2, 3`,
  );

describe('the online partition conversion', () => {
  it('converts tables with rows while writes go on, resumes after an interruption, and ends as a new install', async () => {
    expect(await conversionPending(db.sql)).toEqual(['events', 'webhook_deliveries', 'meter_logs']);
    // The keys of readings recorded before the upgrade were carried over by the migration.
    expect((await findLogByKey(db.sql, 'org-c', 'key-3'))?.id).toBe('log-3');

    const writes = writer();
    // Stopped once right after the events' swap (their reference to events not checked yet), once mid-deliveries.
    await expect(convertToPartitions(db.sql, { stopAfter: 'events:swap' })).rejects.toBeInstanceOf(ConversionStopped);
    await expect(convertToPartitions(db.sql, { stopAfter: 'webhook_deliveries:check' })).rejects.toBeInstanceOf(
      ConversionStopped,
    );
    expect(await conversionPending(db.sql)).toEqual(['webhook_deliveries', 'meter_logs']);
    expect(await convertToPartitions(db.sql)).toEqual(['webhook_deliveries', 'meter_logs']);
    const { written, failures } = await writes.stop();
    expect(failures).toEqual([]);
    expect(written).toBeGreaterThan(0);
    expect(await conversionPending(db.sql)).toEqual([]);
    expect(await convertToPartitions(db.sql)).toEqual([]);

    for (const table of ['events', 'webhook_deliveries', 'meter_logs'] as const) {
      const parts = await listPartitions(db.sql, table);
      expect(parts[0]).toMatchObject({ name: `${table}_legacy` });
      expect(parts.length).toBeGreaterThan(3);
      const [{ n }] = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      expect(n).toBe(ROWS + written);
    }
    expect(await shape(db)).toEqual(await shape(fresh));

    // After the conversion: a retried key finds its reading, an event's delete still cascades to its deliveries.
    expect((await findLogByKey(db.sql, 'org-c', 'w-key-1'))?.id).toBe('w-log-1');
    await db.sql.exec(`DELETE FROM events WHERE id = 'evt-1'`);
    expect(await db.sql.query(`SELECT 1 FROM webhook_deliveries WHERE id = 'del-1'`)).toEqual([]);
  });

  it('removes the expired history of the attached partition day by day, as before the conversion', async () => {
    const count = async (table: string, older: boolean) => {
      const [{ n }] = await db.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE "createdAt" ${older ? '<' : '>='} now() - interval '30 days'`,
      );
      return n;
    };
    const young = { events: await count('events', false), deliveries: await count('webhook_deliveries', false) };
    expect(await count('webhook_deliveries', true)).toBeGreaterThan(0);
    // A delivery of an expired event that is itself young keeps its event.
    await db.sql.exec(
      `INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", "eventCreatedAt")
       SELECT 'keep-del', 'org-c', 'sub-c', id, type, "createdAt" FROM events WHERE id = 'evt-60'`,
    );

    const removed = await pruneWebhookHistory(db, new Date(), 30);
    expect(removed.deliveries).toBeGreaterThan(0);
    expect(removed.events).toBeGreaterThan(0);
    expect(await count('webhook_deliveries', true)).toBe(0);
    expect(await db.sql.query(`SELECT id FROM events WHERE "createdAt" < now() - interval '30 days'`)).toEqual([
      { id: 'evt-60' },
    ]);
    expect(await count('events', false)).toBe(young.events);
    expect(await count('webhook_deliveries', false)).toBe(young.deliveries + 1);
    expect((await listPartitions(db.sql, 'events'))[0]).toMatchObject({ name: 'events_legacy' });

    // Once all of it is past the cutoff, the attached history leaves whole, as any month.
    const later = new Date(Date.now() + 400 * 24 * 3600 * 1000);
    await pruneWebhookHistory(db, later, 30);
    for (const table of ['events', 'webhook_deliveries'] as const) {
      expect((await listPartitions(db.sql, table)).map((p) => p.name)).not.toContain(`${table}_legacy`);
    }
    expect(await db.sql.query(`SELECT id FROM events WHERE id = 'evt-60'`)).toEqual([]);
  });
});
