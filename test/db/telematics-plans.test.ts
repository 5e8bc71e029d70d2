import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlRunner } from '../../src/db/database.ts';
import { matchKeys } from '../../src/modules/telematics/telematics.rules.ts';
import {
  listConnections,
  listEquipment,
  listRuns,
  matchCandidates,
} from '../../src/modules/telematics/telematics.repository.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';
import { nodes, plansOf, scansOf, type PlanNode } from '../helpers/db/query-plans.ts';

/**
 * The plans of the telematics queries that grow with a fleet, read with EXPLAIN. Matching runs once per feed page
 * against every asset of the organisation, so it is planned on a few thousand analysed assets with the planner's
 * own settings (sequential scans allowed): it must still look each value up in the two match-key indexes. The
 * lists read their index in key or time order, starting at the cursor. Dropping an index, or writing an expression
 * the index does not hold, fails here.
 */
let db: TestDatabase;
const ORG = 'org-telematics-plans';
const OTHER = 'org-telematics-plans-2';

async function planOf(run: (sql: SqlRunner) => Promise<unknown>, off?: string[]): Promise<PlanNode> {
  const found = await plansOf(db, run, off);
  expect(found).toHaveLength(1);
  return found[0];
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.query(
    `INSERT INTO organizations (id, name, slug) VALUES ($1, 'Plans', 'telematics-plans'), ($2, 'Other', 'telematics-plans-2')`,
    [ORG, OTHER],
  );
  // 38,000 assets in the organisation and 2,000 in another: a third with a VIN, four in five with a serial, stored
  // as typed. Below some 15,000 rows, reading them all costs the planner about what a page of lookups does.
  await db.sql.query(
    `INSERT INTO assets (id, "orgId", nickname, "assetClass", vin, serial, "meterType", "meterUnit", "updatedAt")
     SELECT 'a' || g, CASE WHEN g % 20 = 1 THEN $2 ELSE $1 END, 'Machine ' || g, (enum_range(NULL::"AssetClass"))[1],
       CASE WHEN g % 3 = 0 THEN 'Vin' || g END, CASE WHEN g % 5 <> 0 THEN ' SN-' || g || ' ' END, 'HOURS', 'h', now()
     FROM generate_series(1, 40000) AS g`,
    [ORG, OTHER],
  );
  await db.sql.query(
    `INSERT INTO telematics_connections (id, "orgId", name, standard, "fleetUrl", "authType", "updatedAt")
     VALUES ('c1', $1, 'Feed', 'iso-15143-3', 'https://provider.example/Fleet', 'none', now())`,
    [ORG],
  );
  await db.sql.query(
    `INSERT INTO telematics_equipment (id, "orgId", "connectionId", "equipmentKey", "assetId", "linkMode", "lastSeenAt", "updatedAt")
     SELECT 'e' || g, $1, 'c1', 'PIN' || g, CASE WHEN g % 2 = 0 THEN 'a' || (g * 2) END,
       CASE WHEN g % 2 = 0 THEN 'auto' END, now(), now()
     FROM generate_series(1, 2000) AS g`,
    [ORG],
  );
  await db.sql.exec('ANALYZE');
});
afterAll(() => db.close());

describe('telematics query plans', () => {
  it("matching a page's machines looks each PIN and serial up in the match-key indexes, not a scan", async () => {
    // A page of 100 machines: each offers a PIN and a serial number, as a feed writes them.
    const machines = Array.from({ length: 100 }, (_, i) => ({ pin: `VIN${i * 6}`, serialNumber: ` sn-${i * 4} ` }));
    const plan = await planOf((sql) => matchCandidates(sql, ORG, matchKeys(machines)), []);

    const assetScans = scansOf(plan, 'assets');
    expect(assetScans.map((s) => s['Node Type'])).not.toContain('Seq Scan');
    const indexes = nodes(plan)
      .map((n) => n['Index Name'])
      .filter(Boolean);
    expect(indexes).toEqual(expect.arrayContaining(['assets_orgId_vin_match_idx', 'assets_orgId_serial_match_idx']));
    for (const n of nodes(plan).filter((x) => /match_idx/.test(x['Index Name'] ?? ''))) {
      expect(n['Index Cond']).toContain('"orgId"');
      expect(n['Index Cond']).toMatch(/lower\(btrim\((vin|serial)\)\)/);
    }
  });

  it('the matches it finds are trimmed and case-insensitive, of the organisation only', async () => {
    const rows = await matchCandidates(db.sql, ORG, matchKeys([{ pin: 'vin6', serialNumber: 'SN-8' }]));
    expect(rows.map((r) => r.id).sort()).toEqual(['a6', 'a8']);
    expect((await matchCandidates(db.sql, OTHER, ['vin6', 'sn-8', 'sn-21'])).map((r) => r.id)).toEqual(['a21']);
  });

  it('GET …/equipment?matched=true|false reads its own partial index in key order, from the cursor', async () => {
    for (const [matched, index] of [
      [true, 'telematics_equipment_matched_idx'],
      [false, 'telematics_equipment_unmatched_idx'],
    ] as const) {
      const plan = await planOf((sql) => listEquipment(sql, 'c1', matched, 'PIN500', 51));
      const scans = scansOf(plan, 'telematics_equipment');
      expect(scans.map((s) => s['Index Name'])).toEqual([index]);
      expect(scans[0]['Index Cond']).toContain('"equipmentKey" >');
      expect(scans[0].Filter ?? '').not.toContain('assetId');
      expect(nodes(plan).map((n) => n['Node Type'])).not.toContain('Sort');
    }
    const all = await planOf((sql) => listEquipment(sql, 'c1', undefined, 'PIN500', 51));
    expect(scansOf(all, 'telematics_equipment').map((s) => s['Index Name'])).toEqual([
      'telematics_equipment_connectionId_equipmentKey_key',
    ]);
  });

  it('connections and runs read their index newest first, from the cursor', async () => {
    const cursor: [Date, string] = [new Date('2026-06-01T00:00:00Z'), 'x'];
    for (const [plan, index] of [
      [await planOf((sql) => listConnections(sql, ORG, cursor, 51)), 'telematics_connections_orgId_createdAt_id_idx'],
      [await planOf((sql) => listRuns(sql, 'c1', cursor, 51)), 'telematics_runs_connectionId_startedAt_id_idx'],
    ] as const) {
      expect(nodes(plan).map((n) => n['Node Type'])).not.toContain('Sort');
      const scan = nodes(plan).find((n) => n['Index Name'] === index);
      expect(scan?.['Index Cond']).toMatch(/"(createdAt|startedAt)"/);
    }
  });
});
