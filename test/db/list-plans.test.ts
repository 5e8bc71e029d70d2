import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/core/context.ts';
import type { SqlRunner } from '../../src/db/database.ts';
import { listAssetRows } from '../../src/modules/assets/assets.repository.ts';
import { listFlags } from '../../src/modules/flags/flags.repository.ts';
import { ListFlagsQuery } from '../../src/modules/flags/flags.schemas.ts';
import { listMeterLogs } from '../../src/modules/hours/hours.repository.ts';
import { ListHoursQuery } from '../../src/modules/hours/hours.schemas.ts';
import { listProjects } from '../../src/modules/projects/projects.repository.ts';
import { listRepairs } from '../../src/modules/repairs/repairs.repository.ts';
import { ListRepairsQuery } from '../../src/modules/repairs/repairs.schemas.ts';
import { listToolEvents } from '../../src/modules/tools/tool-activity.repository.ts';
import { findToolPage } from '../../src/modules/tools/tools.repository.ts';
import { ListToolsQuery, ToolEventsQuery } from '../../src/modules/tools/tools.schemas.ts';
import { listWorkOrders } from '../../src/modules/work-orders/work-orders.repository.ts';
import { ListWorkOrdersQuery } from '../../src/modules/work-orders/work-orders.schemas.ts';
import { listYards } from '../../src/modules/yards/yards.repository.ts';
import { listAttachments } from '../../src/modules/attachments/attachments.repository.ts';
import { listEvents } from '../../src/modules/events/events.repository.ts';
import { ListEventsQuery } from '../../src/modules/events/events.schemas.ts';
import { listVendors } from '../../src/modules/vendors/vendors.repository.ts';
import { ListVendorsQuery } from '../../src/modules/vendors/vendors.schemas.ts';
import { listPurchaseOrders } from '../../src/modules/purchase-orders/purchase-orders.repository.ts';
import { ListPurchaseOrdersQuery } from '../../src/modules/purchase-orders/purchase-orders.schemas.ts';
import { ensureMonths } from '../../src/db/partitions.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, type PlanNode } from '../helpers/db/query-plans.ts';

/**
 * The plan of every list query, read with EXPLAIN through the repositories' own SQL. On test-sized tables
 * the planner rightly prefers sequential scans, so sequential scans are priced out (enable_seqscan = off)
 * and each query must then read the index named for it, start at the cursor (a row-value or range Index
 * Cond, not a Filter), and never sort a set that is not already cut to a page. Dropping an index, or
 * writing a cursor the index cannot use, fails here. The two aggregates are in aggregate-plans.test.ts.
 */

/** A Sort may only see rows that a Limit already cut to a page (the per-value ranges of a split list). */
function unboundedSorts(n: PlanNode): PlanNode[] {
  const reachesScanWithoutLimit = (m: PlanNode): boolean =>
    m['Node Type'] !== 'Limit' && (/Scan/.test(m['Node Type']) || (m.Plans ?? []).some(reachesScanWithoutLimit));
  const here = n['Node Type'] === 'Sort' && (n.Plans ?? []).some(reachesScanWithoutLimit) ? [n] : [];
  return [...here, ...(n.Plans ?? []).flatMap(unboundedSorts)];
}

let db: TestDatabase;
let orgId: string;

/** The plan of the one statement `run` sends, with sequential scans priced out. */
async function planOf(label: string, run: (sql: SqlRunner) => Promise<unknown>): Promise<PlanNode> {
  const found = await plansOf(db, run);
  expect(found.length, `${label}: expected one statement`).toBe(1);
  return found[0];
}

/**
 * The plan reads `index`, with no sequential scan and no unbounded sort; with `cursor` (the order's columns)
 * every scan of the index has one of them in its Index Cond and none in a Filter: the cursor starts the range.
 */
function expectIndexed(plan: PlanNode, index: string, cursor: string[] = [], narrow = false) {
  const all = nodes(plan);
  expect(all.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Node Type'])).toEqual([]);
  // `narrow`: the index leads with one asset or person, so a Sort that reads only it sorts their own rows.
  const readsOnlyIndex = (s: PlanNode) =>
    nodes(s)
      .filter((n) => /Scan/.test(n['Node Type']) && n['Node Type'] !== 'Bitmap Heap Scan')
      .every((n) => n['Index Name'] === index);
  expect(
    unboundedSorts(plan)
      .filter((s) => !(narrow && readsOnlyIndex(s)))
      .map((n) => n['Node Type']),
  ).toEqual([]);
  // An InitPlan that looks the cursor row up by id (tool events) is not the page's range.
  const scans = all.filter((n) => n['Index Name'] === index && n['Parent Relationship'] !== 'InitPlan');
  expect(
    scans.length,
    `expected a scan of ${index}, plan used ${all
      .map((n) => n['Index Name'])
      .filter(Boolean)
      .join(', ')}`,
  ).toBeGreaterThan(0);
  for (const s of scans) {
    for (const column of cursor)
      expect(s.Filter ?? '', `${column} filtered, not in the range, on ${index}`).not.toContain(column);
    if (cursor.length > 0)
      expect(
        cursor.some((c) => (s['Index Cond'] ?? '').includes(c)),
        `cursor not in the Index Cond of ${index}`,
      ).toBe(true);
  }
}

const CREATED = ['"createdAt"'];
const LOGGED = ['"loggedAt"'];
const QUEUE = ['priority', '"dueAt"', '"createdAt"'];

const AT = '2026-06-01T00:00:00.000Z';
const after = (): [Date, string] => [new Date(AT), 'x'];

beforeAll(async () => {
  db = await createTestDatabase();
  [{ id: orgId }] = await db.sql.query<{ id: string }>(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-plans', 'Plans', 'plans') RETURNING id`,
  );
  // The cursor's month, for the lists of partitioned tables (a page past the cursor reads the months up to it).
  for (const table of ['meter_logs', 'events'] as const) await ensureMonths(db, table, [new Date(AT)]);
  await db.sql.exec('ANALYZE');
});
afterAll(() => db.close());

describe('list queries read an index in their order, starting at the cursor', () => {
  it('assets', async () => {
    expectIndexed(
      await planOf('assets', (sql) => listAssetRows(sql, orgId, after(), 51)),
      'assets_orgId_createdAt_id_idx',
      CREATED,
    );
  });

  it('hours: org-wide, the review queue, a status subset, by asset', async () => {
    const q = (query: Record<string, string>) => ListHoursQuery.parse(query);
    expectIndexed(
      await planOf('hours', (sql) => listMeterLogs(sql, orgId, q({}), after())),
      'meter_logs_orgId_loggedAt_id_idx',
      LOGGED,
    );
    expectIndexed(
      await planOf('review queue', (sql) => listMeterLogs(sql, orgId, q({ reviewStatus: 'PENDING' }), after())),
      'meter_logs_orgId_reviewStatus_loggedAt_id_idx',
      LOGGED,
    );
    expectIndexed(
      await planOf('reviewed', (sql) => listMeterLogs(sql, orgId, q({ reviewStatus: 'APPROVED,REJECTED' }), after())),
      'meter_logs_orgId_reviewStatus_loggedAt_id_idx',
      LOGGED,
    );
    expectIndexed(
      await planOf('hours by asset', (sql) => listMeterLogs(sql, orgId, q({ assetId: 'a1' }), after())),
      'meter_logs_assetId_loggedAt_id_idx',
      LOGGED,
    );
  });

  it('flags: default, every status, by asset', async () => {
    const q = (query: Record<string, string>) => ListFlagsQuery.parse(query);
    expectIndexed(
      await planOf('flags', (sql) => listFlags(sql, orgId, q({}), after())),
      'flags_orgId_status_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('flags all', (sql) => listFlags(sql, orgId, q({ status: 'OPEN,IN_PROGRESS,RESOLVED' }), after())),
      'flags_orgId_status_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('flags by asset', (sql) => listFlags(sql, orgId, q({ assetId: 'a1' }), after())),
      'flags_assetId_status_createdAt_id_idx',
      CREATED,
    );
  });

  it('repairs: org-wide, by asset, by project', async () => {
    const q = (query: Record<string, string>) => ListRepairsQuery.parse(query);
    expectIndexed(
      await planOf('repairs', (sql) => listRepairs(sql, orgId, q({}), after())),
      'repairs_orgId_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('repairs by asset', (sql) => listRepairs(sql, orgId, q({ assetId: 'a1' }), after())),
      'repairs_assetId_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('repairs by project', (sql) => listRepairs(sql, orgId, q({ projectId: 'p1' }), after())),
      'repairs_projectId_createdAt_id_idx',
      CREATED,
    );
  });

  it('projects, yards', async () => {
    expectIndexed(
      await planOf('projects', (sql) => listProjects(sql, orgId, ['ACTIVE', 'ON_HOLD'], after(), 51)),
      'projects_orgId_status_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(await planOf('yards', (sql) => listYards(sql, orgId, ['Depot', 'x'], 51)), 'yards_orgId_name_key', [
      'name',
    ]);
  });

  it('vendors, purchase orders: org-wide, a status subset, by vendor', async () => {
    expectIndexed(
      await planOf('vendors', (sql) => listVendors(sql, orgId, ListVendorsQuery.parse({}), ['acme', 'x'])),
      'vendors_orgId_name_idx',
      ['lower(name)'],
    );
    const q = (query: Record<string, string>) => ListPurchaseOrdersQuery.parse(query);
    expectIndexed(
      await planOf('purchase orders', (sql) => listPurchaseOrders(sql, orgId, q({}), after())),
      'purchase_orders_orgId_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('open orders', (sql) =>
        listPurchaseOrders(sql, orgId, q({ status: 'APPROVED,PARTIALLY_RECEIVED' }), after()),
      ),
      'purchase_orders_orgId_status_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('orders by vendor', (sql) => listPurchaseOrders(sql, orgId, q({ vendorId: 'v1' }), after())),
      'purchase_orders_orgId_vendorId_createdAt_id_idx',
      CREATED,
    );
  });

  it("attachments: one record's, with the record's existence in the same statement", async () => {
    const plan = await planOf('attachments', (sql) => listAttachments(sql, orgId, 'tool', 'tool-1', after(), 51));
    expectIndexed(plan, 'attachments_orgId_subjectType_subjectId_createdAt_id_idx', CREATED);
    // The record's probe is an index scan too (on empty tables the planner may pick any of tools' indexes).
    const probe = nodes(plan).filter((n) => n['Relation Name'] === 'tools');
    expect(probe.map((n) => n['Node Type'])).toEqual([expect.stringMatching(/Index/)]);
  });

  it("attachments: a deleted subject's trigger deletes through the subject index", async () => {
    // The DELETE of the installed trigger function, with the deleted row's values in place of OLD and TG_ARGV.
    const [{ prosrc }] = await db.sql.query<{ prosrc: string }>(
      `SELECT prosrc FROM pg_proc WHERE proname = 'attachments_delete_subject'`,
    );
    const statement = /DELETE[^;]+/
      .exec(prosrc)![0]
      .replace(/OLD\."orgId"/g, '$1')
      .replace(/TG_ARGV\[0\]/g, "'tool'")
      .replace(/OLD\."id"/g, '$2');
    const plan = await planOf('attachments trigger', (sql) => sql.query(statement, [orgId, 'tool-1']));
    expectIndexed(plan, 'attachments_orgId_subjectType_subjectId_createdAt_id_idx');
    expect(nodes(plan).find((n) => n['Index Name'])?.['Index Cond']).toContain('"orgId"');
  });

  it('work orders: the active queue and a status subset, past a cursor', async () => {
    const cursor = Buffer.from(JSON.stringify(['HIGH', AT, AT, 'x'])).toString('base64url');
    const q = (query: Record<string, string>) => ListWorkOrdersQuery.parse({ ...query, cursor });
    // Orders spread over 200 assets and assignees, analysed, so the planner knows an asset or a person is
    // narrower than the organisation's queue (on empty tables every index looks alike).
    await db.sql.query(
      `INSERT INTO work_orders (id, "orgId", number, title, status, priority, "assetId", "assignedToId", "createdById", "updatedAt")
       SELECT 'wo' || g, $1, g, 'Job', (enum_range(NULL::"WorkOrderStatus"))[1 + g % 6],
         (enum_range(NULL::"WorkOrderPriority"))[1 + g % 4], 'a' || (g % 200), 'u' || (g % 200), 'x', now()
       FROM generate_series(1, 1000) AS g`,
      [orgId],
    );
    await db.sql.exec('ANALYZE work_orders');
    expectIndexed(
      await planOf('queue', (sql) => listWorkOrders(sql, orgId, q({}))),
      'work_orders_active_queue_idx',
      QUEUE,
    );
    expectIndexed(
      await planOf('done', (sql) => listWorkOrders(sql, orgId, q({ status: 'DONE' }))),
      'work_orders_status_queue_idx',
      QUEUE,
    );
    expectIndexed(
      await planOf('by asset', (sql) => listWorkOrders(sql, orgId, q({ assetId: 'a1' }))),
      'work_orders_asset_queue_idx',
      QUEUE,
      true,
    );
    expectIndexed(
      await planOf('by assignee', (sql) => listWorkOrders(sql, orgId, q({ assignedToId: 'u1', status: 'DONE' }))),
      'work_orders_assignee_queue_idx',
      QUEUE,
      true,
    );
  });

  it('tools: name order, lowStock, pmOverdue, warrantyExpiringDays', async () => {
    const cursor = Buffer.from(JSON.stringify(['Drill', 'x'])).toString('base64url');
    const page = { limit: 50, cursor };
    const q = (query: Record<string, string>) => ListToolsQuery.parse(query);
    const now = new Date(AT);
    expectIndexed(
      await planOf('tools', (sql) => findToolPage(sql, orgId, q({}), page, now)),
      'tools_orgId_name_id_idx',
      ['name'],
    );
    expectIndexed(
      await planOf('lowStock', (sql) => findToolPage(sql, orgId, q({ lowStock: 'true' }), page, now)),
      'tools_low_stock_idx',
      ['name'],
    );
    expectIndexed(
      await planOf('pmOverdue', (sql) => findToolPage(sql, orgId, q({ pmOverdue: 'true' }), page, now)),
      'tools_pm_tracked_idx',
      ['name'],
    );
    // Filters that lead an index of their own in name order.
    for (const [filter, index] of [
      [{ category: 'Drills' }, 'tools_orgId_category_name_id_idx'],
      [{ assignedUserId: 'u1' }, 'tools_assignedUserId_name_id_idx'],
      [{ assignedVehicleId: 'v1' }, 'tools_assignedVehicleId_name_id_idx'],
      [{ parentKitId: 'k1' }, 'tools_parentKitId_name_id_idx'],
    ] as const) {
      expectIndexed(await planOf(index, (sql) => findToolPage(sql, orgId, q(filter), page, now)), index, ['name']);
    }
    const warranty = await planOf('warranty', (sql) =>
      findToolPage(sql, orgId, q({ warrantyExpiringDays: '30' }), { limit: 50 }, now),
    );
    expect(nodes(warranty).filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });

  it('tool events of one tool, past a cursor', async () => {
    await db.sql.query(
      `INSERT INTO tools (id, "orgId", name, "scanToken", "updatedAt") VALUES ('t1', $1, 'Drill', 's1', now())`,
      [orgId],
    );
    await db.sql.query(`INSERT INTO tool_events (id, "orgId", "toolId", kind) VALUES ('e1', $1, 't1', 'AUDIT')`, [
      orgId,
    ]);
    const q = ToolEventsQuery.parse({ cursor: 'e1' });
    const plan = await planOf('tool events', (sql) =>
      listToolEvents({ prisma: db.prisma, sql }, { orgId } as RequestContext, 't1', { ...q, limit: 50 }),
    );
    expectIndexed(plan, 'tool_events_toolId_createdAt_id_idx', CREATED);
    // The cursor row is found inside the same statement, not by a round trip before it.
    expect(nodes(plan).filter((n) => n['Parent Relationship'] === 'InitPlan')).toHaveLength(1);
  });

  it('the event feed: everything, one type, several types, a time window, past a cursor', async () => {
    const q = (query: Record<string, string>) => ListEventsQuery.parse(query);
    expectIndexed(
      await planOf('events', (sql) => listEvents(sql, orgId, q({}), after())),
      'events_orgId_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('events since/until', (sql) =>
        listEvents(sql, orgId, q({ since: '2026-01-01T00:00:00Z', until: '2026-12-01T00:00:00Z' }), after()),
      ),
      'events_orgId_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('events of one type', (sql) => listEvents(sql, orgId, q({ type: 'flag.created' }), after())),
      'events_orgId_type_createdAt_id_idx',
      CREATED,
    );
    expectIndexed(
      await planOf('events of two types', (sql) =>
        listEvents(sql, orgId, q({ type: 'flag.created,asset.created' }), after()),
      ),
      'events_orgId_type_createdAt_id_idx',
      CREATED,
    );
  });
});
