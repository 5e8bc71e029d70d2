import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlRunner } from '../../src/db/database.ts';
import { inspectionSummary, listInspections } from '../../src/modules/inspections/inspections.repository.ts';
import { listInspectionForms } from '../../src/modules/inspections/inspection-forms.repository.ts';
import { ListInspectionsQuery } from '../../src/modules/inspections/inspections.schemas.ts';
import { ListInspectionFormsQuery } from '../../src/modules/inspections/inspection-forms.schemas.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, type PlanNode } from '../helpers/db/query-plans.ts';

/**
 * The plans of the inspection lists and the fleet summary, read with EXPLAIN and sequential scans priced out:
 * each list filter reads its own index in the list's order, starting at the cursor, and never sorts more than a
 * page; the summary reads assets by (orgId, id) and the rest by primary key or per-asset index, whatever the number
 * of inspections. Dropping an index or writing a predicate it cannot use fails here.
 */
let db: TestDatabase;

async function planOf(run: (sql: SqlRunner) => Promise<unknown>): Promise<PlanNode> {
  const found = await plansOf(db, run);
  expect(found).toHaveLength(1);
  return found[0];
}

function unboundedSorts(n: PlanNode): PlanNode[] {
  const reachesScanWithoutLimit = (m: PlanNode): boolean =>
    m['Node Type'] !== 'Limit' && (/Scan/.test(m['Node Type']) || (m.Plans ?? []).some(reachesScanWithoutLimit));
  const here = n['Node Type'] === 'Sort' && (n.Plans ?? []).some(reachesScanWithoutLimit) ? [n] : [];
  return [...here, ...(n.Plans ?? []).flatMap(unboundedSorts)];
}

/** Reads `index` (and no sequential scan, no unbounded sort); with a cursor, the range starts at it. */
function expectIndexed(plan: PlanNode, index: string, cursorColumn?: string) {
  const all = nodes(plan);
  expect(all.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  expect(unboundedSorts(plan)).toEqual([]);
  const scans = all.filter((n) => n['Index Name'] === index);
  expect(
    scans.length,
    `expected ${index}, plan used ${all.map((n) => n['Index Name']).filter(Boolean)}`,
  ).toBeGreaterThan(0);
  if (cursorColumn) for (const s of scans) expect(s['Index Cond'] ?? '').toContain(cursorColumn);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.exec('ANALYZE');
});
afterAll(() => db.close());

const after: [Date, string] = [new Date('2026-06-01T00:00:00Z'), 'x'];

describe('inspection plans', () => {
  const q = (query: Record<string, string>) => ListInspectionsQuery.parse(query);

  it('GET /inspections: org-wide, by asset, by form, by result, with since', async () => {
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({}), after)),
      'inspections_orgId_inspectedAt_id_idx',
      '"inspectedAt"',
    );
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({ assetId: 'a1' }), after)),
      'inspections_assetId_inspectedAt_id_idx',
      '"inspectedAt"',
    );
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({ inspectionFormId: 'f1' }), after)),
      'inspections_formId_inspectedAt_id_idx',
      '"inspectedAt"',
    );
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({ result: 'FAIL' }), null)),
      'inspections_orgId_result_inspectedAt_id_idx',
    );
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({ since: '2026-01-01T00:00:00Z' }), null)),
      'inspections_orgId_inspectedAt_id_idx',
      '"inspectedAt"',
    );
  });

  it('GET /inspections?result=: the range starts at the cursor and at since', async () => {
    const resultIndex = 'inspections_orgId_result_inspectedAt_id_idx';
    for (const result of ['FAIL', 'PASS'])
      expectIndexed(
        await planOf((sql) => listInspections(sql, 'org', q({ result }), after)),
        resultIndex,
        '"inspectedAt"',
      );
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({ result: 'FAIL', since: '2026-01-01T00:00:00Z' }), null)),
      resultIndex,
      '"inspectedAt"',
    );
    // Both results is no filter at all: the org-wide index, not two ranges merged and sorted.
    expectIndexed(
      await planOf((sql) => listInspections(sql, 'org', q({ result: 'PASS,FAIL' }), after)),
      'inspections_orgId_inspectedAt_id_idx',
      '"inspectedAt"',
    );
  });

  it('GET /inspections?since=: a bound on the index of every filter, with and without a cursor', async () => {
    const since = '2026-01-01T00:00:00Z';
    const cases: [Record<string, string>, string][] = [
      [{}, 'inspections_orgId_inspectedAt_id_idx'],
      [{ assetId: 'a1' }, 'inspections_assetId_inspectedAt_id_idx'],
      [{ inspectionFormId: 'f1' }, 'inspections_formId_inspectedAt_id_idx'],
      [{ result: 'PASS' }, 'inspections_orgId_result_inspectedAt_id_idx'],
    ];
    for (const [filter, index] of cases)
      for (const cursor of [null, after]) {
        const plan = await planOf((sql) => listInspections(sql, 'org', q({ ...filter, since }), cursor));
        expectIndexed(plan, index, '"inspectedAt"');
        const conds = nodes(plan)
          .filter((n) => n['Index Name'] === index)
          .map((n) => String(n['Index Cond'] ?? ''));
        // since is a lower bound read from the index (>=), not a filter over the rows.
        for (const c of conds) expect(c).toMatch(/"inspectedAt" >=/);
      }
  });

  it('GET /inspection-forms reads one range per status', async () => {
    const plan = await planOf((sql) => listInspectionForms(sql, 'org', ListInspectionFormsQuery.parse({}), after));
    expectIndexed(plan, 'inspection_forms_orgId_status_createdAt_id_idx', '"createdAt"');
  });

  it('GET /inspections/summary: assets by (orgId, id), summary rows by key, open flags per asset', async () => {
    const plan = await planOf((sql) => inspectionSummary(sql, 'org', 'a-cursor', 201));
    const all = nodes(plan);
    expect(all.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    expect(unboundedSorts(plan)).toEqual([]);
    const used = new Set(all.map((n) => n['Index Name']).filter(Boolean));
    expect(used.has('assets_orgId_id_idx') || used.has('assets_pkey')).toBe(true);
    expect(used).toContain('asset_inspection_summaries_pkey');
    expect(used).toContain('flags_assetId_status_createdAt_id_idx');
    expect([...used].some((i) => String(i).startsWith('inspections_'))).toBe(false);
  });
});
