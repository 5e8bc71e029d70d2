import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureMonths } from '../../src/db/partitions.ts';
import { economySegments, meterLogFuelCosts } from '../../src/modules/costs/costs.repository.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, scansOf } from '../helpers/db/query-plans.ts';

/**
 * The fuel economy of the cost reports reads the ends of each asset's segments through indexes ordered by asset
 * and time: a few rows per asset, never a sort of the period's fills.
 */
let db: TestDatabase;
const orgId = 'org-cost-plans';
beforeAll(async () => {
  db = await createTestDatabase();
  // The readings below span January to May 2026: their months exist before the bulk insert.
  const months = [0, 1, 2, 3, 4].map((m) => new Date(Date.UTC(2026, m, 1)));
  await ensureMonths(db, 'meter_logs', months);
  await db.sql.exec(
    `INSERT INTO organizations (id, name, slug) VALUES ('org-cost-plans', 'Plans', 'cost-plans');
     INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "updatedAt")
     SELECT 'cost-asset-' || n, 'org-cost-plans', 'Asset ' || n, 'on-road', 'HOURS', 'h', now()
     FROM generate_series(1, 200) n;
     INSERT INTO fuel_entries (id, "orgId", "assetId", "fueledAt", volume, unit, "volumeLiters", "totalCost",
       "pricePerUnit", "meterReading", partial, "projectId")
     SELECT 'cost-fill-' || n, 'org-cost-plans', 'cost-asset-' || (n % 200 + 1),
       TIMESTAMPTZ '2026-01-01Z' + n * INTERVAL '10 minutes', 40, 'LITER', 40, 60, 1.5, n, n % 10 = 3, NULL
     FROM generate_series(1, 10000) n;
     INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "fuelVolume", "fuelUnit", "loggedAt")
     SELECT 'cost-log-' || n, 'org-cost-plans', 'cost-asset-' || (n % 200 + 1), n, 1,
       CASE WHEN n % 10 = 0 THEN 40 END, CASE WHEN n % 10 = 0 THEN 'LITER' END,
       TIMESTAMPTZ '2026-01-01Z' + n * INTERVAL '10 minutes'
     FROM generate_series(1, 20000) n;
     ANALYZE`,
  );
});
afterAll(() => db.close());

describe('fuel economy', () => {
  it('probes fills per asset through the (orgId, assetId, time) indexes, and sorts no fills', async () => {
    const period = { orgId, from: new Date('2026-01-01Z'), to: new Date('2027-01-01Z') };
    for (const assetId of [null, 'cost-asset-1']) {
      const [plan, ...more] = await plansOf(db, (sql) => economySegments(sql, { ...period, assetId }));
      expect(more).toEqual([]);
      const fills = scansOf(plan, 'fuel_entries');
      // A fuel entry's reading is checked against the rejected readings (by primary key or the review index).
      const logs = scansOf(plan, 'meter_logs').filter((s) => s['Index Name'] !== 'meter_logs_pkey');
      const fillLogs = logs.filter((s) => s['Index Name'] !== 'meter_logs_orgId_reviewStatus_loggedAt_id_idx');
      expect(fills.length).toBeGreaterThan(0);
      expect(fillLogs.length).toBeGreaterThan(0);
      for (const s of fills) expect(s['Index Name']).toBe('fuel_entries_orgId_assetId_fueledAt_id_idx');
      for (const s of fillLogs) expect(s['Index Name']).toBe('meter_logs_orgId_assetId_fuel_loggedAt_idx');
      for (const s of [...fills, ...fillLogs]) expect(s['Index Cond']).toContain('"assetId" = ');
      for (const sort of nodes(plan).filter((n) => n['Node Type'] === 'Sort'))
        expect([...scansOf(sort, 'fuel_entries'), ...scansOf(sort, 'meter_logs')]).toEqual([]);
    }
  });

  it("one asset's meter-log fuel is an index-only range of that asset's fuel logs", async () => {
    const period = { orgId, from: new Date('2026-01-01Z'), to: new Date('2027-01-01Z'), assetId: 'cost-asset-1' };
    const [plan] = await plansOf(db, (sql) => meterLogFuelCosts(sql, period));
    const scans = scansOf(plan, 'meter_logs');
    // One scan per month partition of the period; the months holding readings (analysed) are read from the fuel
    // index alone. (The planner prices empty, never-analysed months apart: any index reads nothing there.)
    const filled = scans.filter((s) => /_2026_0[1-5]$/.test(s.Partition ?? ''));
    expect(filled.map((s) => s.Partition)).toEqual([1, 2, 3, 4, 5].map((m) => `meter_logs_2026_0${m}`));
    for (const scan of filled)
      expect([scan['Node Type'], scan['Index Name']]).toEqual([
        'Index Only Scan',
        'meter_logs_orgId_assetId_fuel_loggedAt_idx',
      ]);
  });
});
