import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlRunner } from '../../src/db/database.ts';
import { ASSET_WITH_PROJECT } from '../../src/modules/hours/hours.repository.ts';
import { listReminders } from '../../src/modules/service-reminders/service-reminders.repository.ts';
import { ListRemindersQuery } from '../../src/modules/service-reminders/service-reminders.schemas.ts';
import { SWEEP_CLAIM_SQL } from '../../src/modules/service-reminders/service-reminder-sweep.job.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, type PlanNode } from '../helpers/db/query-plans.ts';

/**
 * The plans of the service reminders' three hot queries, read with EXPLAIN and sequential scans priced
 * out: the urgency list reads one range per status of the index in its order, starting at the cursor, and never
 * sorts more than a page; the calendar sweep is one range of the calendar index; the reading path's probe is one
 * lookup of the meter-alert index. Dropping an index or writing a predicate it cannot use fails here.
 */
let db: TestDatabase;

async function planOf(run: (sql: SqlRunner) => Promise<unknown>): Promise<PlanNode> {
  const found = await plansOf(db, run);
  expect(found).toHaveLength(1);
  return found[0];
}

const scans = (plan: PlanNode, table: string) =>
  nodes(plan).filter((n) => /Scan/.test(n['Node Type']) && n['Relation Name'] === table);

/** A Sort over a scan that no Limit cut first would sort every matching reminder. */
function unboundedSorts(n: PlanNode): PlanNode[] {
  const reachesScanWithoutLimit = (m: PlanNode): boolean =>
    m['Node Type'] !== 'Limit' && (/Scan/.test(m['Node Type']) || (m.Plans ?? []).some(reachesScanWithoutLimit));
  const here = n['Node Type'] === 'Sort' && (n.Plans ?? []).some(reachesScanWithoutLimit) ? [n] : [];
  return [...here, ...(n.Plans ?? []).flatMap(unboundedSorts)];
}

function expectUrgencyRanges(plan: PlanNode, index: string, withCursor: boolean) {
  const reminderScans = scans(plan, 'service_reminders');
  expect(reminderScans.length).toBeGreaterThan(0);
  expect(reminderScans.map((s) => s['Index Name'])).toEqual(reminderScans.map(() => index));
  expect(unboundedSorts(plan)).toEqual([]);
  for (const s of reminderScans) {
    expect(s['Index Cond'] ?? '').toContain('"statusRank"');
    expect(s.Filter ?? '').not.toContain('"dueKey"');
  }
  // The cursor's rank resumes inside the index range at (dueKey, id); later ranks read from their start.
  if (withCursor) expect(reminderScans.some((s) => (s['Index Cond'] ?? '').includes('"dueKey"'))).toBe(true);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.exec('ANALYZE');
});
afterAll(() => db.close());

describe('service reminder plans', () => {
  const q = (query: Record<string, string>) => ListRemindersQuery.parse(query);
  const cursor: [number, Date, string] = [1, new Date('2026-06-01T00:00:00Z'), 'x'];

  it('GET /service-reminders?status=DUE_SOON,OVERDUE reads the urgency index, first and deep pages', async () => {
    const first = await planOf((sql) => listReminders(sql, 'org', q({ status: 'DUE_SOON,OVERDUE' }), null));
    expectUrgencyRanges(first, 'service_reminders_urgency_idx', false);
    const deep = await planOf((sql) => listReminders(sql, 'org', q({ status: 'DUE_SOON,OVERDUE' }), cursor));
    expectUrgencyRanges(deep, 'service_reminders_urgency_idx', true);
    const every = await planOf((sql) => listReminders(sql, 'org', q({}), cursor));
    expectUrgencyRanges(every, 'service_reminders_urgency_idx', true);
  });

  it('the filtered lists read their own index in the same order', async () => {
    for (const [query, index] of [
      [{ assetId: 'a' }, 'service_reminders_asset_urgency_idx'],
      [{ serviceTaskId: 't' }, 'service_reminders_task_urgency_idx'],
      [{ serviceProgramId: 'p' }, 'service_reminders_program_urgency_idx'],
    ] as const) {
      const plan = await planOf((sql) => listReminders(sql, 'org', q({ ...query, status: 'DUE_SOON' }), cursor));
      expectUrgencyRanges(plan, index, true);
    }
  });

  it('the calendar sweep is one range of the calendar index, no scan of the table', async () => {
    const plan = await planOf((sql) => sql.query(SWEEP_CLAIM_SQL, [new Date(), 500]));
    const [scan, ...rest] = scans(plan, 'service_reminders');
    expect(rest).toEqual([]);
    expect(scan['Index Name']).toBe('service_reminders_calendar_idx');
    expect(scan['Index Cond']).toContain('"nextCheckAt"');
    expect(unboundedSorts(plan)).toEqual([]);
  });

  it('POST /hours asks the meter-alert index whether a reading moves a reminder', async () => {
    const plan = await planOf((sql) =>
      sql.query(`${ASSET_WITH_PROJECT} FROM assets WHERE id = $1 AND "orgId" = $2`, ['a', 'org', null, 120]),
    );
    const probe = scans(plan, 'service_reminders');
    expect(probe.map((s) => s['Index Name'])).toEqual(['service_reminders_meter_alert_idx']);
    expect(probe[0]['Index Cond']).toContain('"meterAlertAt"');
  });
});
