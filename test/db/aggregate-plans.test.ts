import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/core/context.ts';
import type { Project } from '../../src/generated/prisma/client.ts';
import { equipmentUsage } from '../../src/modules/projects/project-usage.repository.ts';
import { EquipmentUsageQuery } from '../../src/modules/projects/project-usage.schemas.ts';
import { createToolActivity } from '../../src/modules/tools/tool-activity.repository.ts';
import { findYardWithCounts } from '../../src/modules/yards/yards.repository.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, scansOf } from '../helpers/db/query-plans.ts';

/**
 * The plans of the two aggregates (tool utilization, project equipment usage), read with EXPLAIN through the
 * modules' own SQL: what they read must stay bounded by the tool's window and the project's assets, never by the
 * organisation.
 */
let db: TestDatabase;
const orgId = 'org-plans';
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.exec(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-plans', 'Plans', 'plans');
     INSERT INTO tools (id, "orgId", name, "scanToken", "updatedAt") VALUES ('t1', 'org-plans', 'Drill', 's1', now());
     ANALYZE`,
  );
});
afterAll(() => db.close());

describe('aggregates read what they aggregate, not the organisation', () => {
  it('tool utilization: one index-only range of custody events, in order (no sort of the events)', async () => {
    const [plan, ...more] = await plansOf(db, (sql) =>
      createToolActivity({ db: { ...db, sql } } as never).utilization({ orgId } as RequestContext, 't1', {
        days: 365,
        topN: 3,
      }),
    );
    expect(more).toEqual([]);
    const scans = scansOf(plan, 'tool_events');
    expect(scans.length).toBeGreaterThan(0);
    for (const s of scans) {
      expect(s['Node Type']).toBe('Index Only Scan');
      expect(s['Index Name']).toBe('tool_events_custody_idx');
      expect(s['Index Cond']).toContain('"createdAt"');
    }
    // Sorts see grouped users only, never the events themselves.
    const sorts = nodes(plan).filter((n) => n['Node Type'] === 'Sort');
    for (const sort of sorts) expect(scansOf(sort, 'tool_events')).toEqual([]);
  });

  it("equipment usage: the project's assets by primary key, never the organisation's", async () => {
    // Statistics for the planner to weigh: 2,000 assets, none checked out.
    await db.sql.exec(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "updatedAt")
       SELECT 'plan-asset-' || n, 'org-plans', 'Asset ' || n, 'on-road', 'HOURS', 'h', now() FROM generate_series(1, 2000) n;
       ANALYZE assets`,
    );
    const project = { id: 'p1', orgId, name: 'Plans', hourlyRate: null } as Project;
    const page = EquipmentUsageQuery.parse({});
    // With nested loops priced out, a plain join of the project's asset ids to assets hashes or merges the whole
    // organisation's assets (what the planner chose at scale, misjudging the project's size); the lateral
    // lookup is a nested loop whatever the estimates.
    const found = await plansOf(db, (sql) => equipmentUsage(sql, project, page), ['enable_seqscan', 'enable_nestloop']);
    expect(found).toHaveLength(2);
    for (const plan of found) {
      const scans = scansOf(plan, 'assets');
      expect(scans.length).toBeGreaterThan(0);
      // An Index Cond on orgId alone would read every asset of the organisation.
      for (const s of scans)
        expect(s['Index Cond'] ?? s['Recheck Cond'] ?? '').toMatch(/\(id = |"checkedOutToProjectId" = /);
    }
  });

  it("yard detail: a yard's assets and tools counted on their indexes led by orgId, in one statement", async () => {
    // 2,400 assets of the organisation, 20 in each of 20 yards: a yard is a small part of the organisation.
    await db.sql.exec(
      `INSERT INTO yards (id, "orgId", name, "updatedAt")
       SELECT 'y' || n, 'org-plans', 'Yard ' || n, now() FROM generate_series(1, 20) n;
       INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "yardId", "updatedAt")
       SELECT 'yard-asset-' || n, 'org-plans', 'Yard asset ' || n, 'trailer', 'NONE', 'none', 'y' || (1 + n % 20), now()
       FROM generate_series(1, 400) n;
       UPDATE tools SET "assignedYardId" = 'y1';
       ANALYZE`,
    );
    const found = await plansOf(db, (sql) => findYardWithCounts(sql, orgId, 'y1'));
    expect(found).toHaveLength(1);
    const all = nodes(found[0]);
    expect(all.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    const indexes = all.flatMap((n) => n['Index Name'] ?? []);
    expect(indexes).toEqual(expect.arrayContaining(['assets_orgId_yardId_idx', 'tools_orgId_assignedYardId_idx']));
    expect(indexes).not.toContain('assets_yardId_idx');
  });
});
