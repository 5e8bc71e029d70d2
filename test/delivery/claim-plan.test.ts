import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClaims } from '../../src/delivery/claims.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, scansOf } from '../helpers/db/query-plans.ts';

/**
 * The claim reads a subscription's queue in due order, whatever the planner's statistics say: a burst of events
 * arrives faster than autovacuum's ANALYZE, so the claims that drain it are planned with statistics of an empty
 * queue. Read with EXPLAIN through claims.ts's own SQL, with every plan allowed. The month's partition holds those
 * statistics; the months ahead have none (autovacuum never analyzes a table no row reached yet).
 */
let db: TestDatabase;
const BACKLOG = 3_000;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.exec(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-claim', 'Claim', 'claim');
     INSERT INTO webhook_subscriptions (id, "orgId", url, events, secret)
       VALUES ('sub-claim', 'org-claim', 'https://receiver.example/hook', '{tool.created}', 'whsec_plan');
     ANALYZE organizations; ANALYZE webhook_subscriptions;
     DO $$ DECLARE p text; BEGIN
       FOR p IN SELECT name FROM fleet_partitions('webhook_deliveries') WHERE now() >= lower_bound AND now() < upper_bound
         UNION ALL SELECT name FROM fleet_partitions('events') WHERE now() >= lower_bound AND now() < upper_bound
       LOOP EXECUTE format('ANALYZE %I', p); END LOOP;
     END $$`,
  );
  // The burst, after the statistics were taken: one subscription's backlog, all due.
  await db.sql.exec(
    `INSERT INTO events (id, "orgId", type, data)
       SELECT 'evt-' || n, 'org-claim', 'tool.created', '{}'::jsonb FROM generate_series(1, ${BACKLOG}) n;
     INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType", "nextAttemptAt")
       SELECT 'del-' || n, 'org-claim', 'sub-claim', 'evt-' || n, 'tool.created', now() - make_interval(secs => n)
       FROM generate_series(1, ${BACKLOG}) n`,
  );
});
afterAll(() => db.close());

describe('the claim of due deliveries', () => {
  it("reads the subscription's queue index in due order: no sort of its backlog, with stale statistics", async () => {
    const claims = (sql: typeof db.sql) => createClaims({ ...db, sql } as never, 'instance-plan', 30);
    const [plan, ...more] = await plansOf(
      db,
      (sql) => claims(sql).claim({ limit: 64, perSubscription: 64, caps: new Map(), blocked: [], after: '' }),
      [],
    );
    expect(more).toEqual([]);
    const queueScans = scansOf(plan, 'webhook_deliveries').filter((s) => s['Index Cond']?.includes('subscriptionId'));
    expect(queueScans.length).toBeGreaterThan(0);
    for (const s of queueScans) expect(s['Index Name']).toBe('webhook_deliveries_queue_idx');
    for (const sort of nodes(plan).filter((n) => n['Node Type'] === 'Sort'))
      expect(scansOf(sort, 'webhook_deliveries')).toEqual([]);
  });

  it('claims the oldest due rows of the backlog first', async () => {
    const rows = await createClaims(db as never, 'instance-plan', 30).claim({
      limit: 5,
      perSubscription: 5,
      caps: new Map(),
      blocked: [],
      after: '',
    });
    expect(rows.map((r) => r.id)).toEqual([3000, 2999, 2998, 2997, 2996].map((n) => `del-${n}`));
  });
});
