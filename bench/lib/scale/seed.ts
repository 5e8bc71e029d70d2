// Seeds the scale benchmark's volumes into a PostgreSQL database, in SQL (generate_series), in a few minutes:
// one organisation with 100,000 assets, 1.92 M meter logs (100 busy assets with 2,000 each; one project with
// 80,000), 20,000 flags, 50,000 work orders, 30,000 repairs, 50,000 tools, 200,000 tool events (one busy tool
// with 2,500), 500 projects and 50 yards; beside it a second organisation at a quarter of that size.
// Ids are md5-derived UUIDs so the benchmark can name rows without looking them up.
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** The first organisation's meter logs by default; another count (BENCH_SCALE_READINGS) is another seed. */
export const DEFAULT_READINGS = 1_920_000;
export const seedVersion = (readings: number) => (readings === DEFAULT_READINGS ? 'scale-v1' : `scale-v1-r${readings}`);

/** Deterministic UUID text for (tag, n): the same in SQL (`uid(...)`) and in TypeScript callers. */
const UID_FN = `CREATE OR REPLACE FUNCTION pg_temp.uid(tag text, n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT md5(tag || ':' || n)::uuid::text $$`;

export interface SeededOrg {
  orgId: string;
  tag: string;
}

/** Rows per organisation at scale 1 (`readings` meter logs); the second organisation gets a quarter. */
function volumes(scale: number, readings: number) {
  const n = (x: number) => Math.round(x * scale);
  return {
    assets: n(100_000),
    busyAssets: n(100),
    busyLogs: 2_000,
    otherLogs: n(readings - 200_000),
    flags: n(20_000),
    workOrders: n(50_000),
    repairs: n(30_000),
    tools: n(50_000),
    toolEvents: n(197_500),
    busyToolEvents: 2_500,
    projects: n(500),
    yards: n(50),
    usageAssets: n(40),
  };
}

export async function seedOrganisation(
  client: pg.ClientBase,
  org: SeededOrg,
  userId: string,
  scale: number,
  log: (m: string) => void,
  readings = DEFAULT_READINGS,
) {
  const v = volumes(scale, readings);
  // The fleet's readings 15 s apart, or closer where that would reach back more than two years.
  const fleetStepSec = Math.min(15, (730 * 86_400) / Math.max(1, v.otherLogs));
  const oldestSec = Math.max(v.busyLogs * 3600 + v.busyAssets, v.otherLogs * fleetStepSec) + 86_400;
  const { orgId, tag } = org;
  const q = (text: string, params: unknown[] = []) => client.query(text, params);
  const step = async (name: string, text: string, params: unknown[] = []) => {
    const t = performance.now();
    await q(text, params);
    log(`  ${tag} ${name} ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };
  await q(UID_FN);
  await step(
    'yards',
    `INSERT INTO yards (id, "orgId", name, "updatedAt") SELECT pg_temp.uid($2 || 'y', g), $1, 'Yard ' || lpad(g::text, 3, '0'), now() FROM generate_series(1, $3) g`,
    [orgId, tag, v.yards],
  );
  await step(
    'projects',
    `INSERT INTO projects (id, "orgId", name, code, status, "hourlyRate", "createdAt", "updatedAt")
    SELECT pg_temp.uid($2 || 'p', g), $1, 'Project ' || g, 'P' || g, (CASE WHEN g % 5 = 0 THEN 'COMPLETED' ELSE 'ACTIVE' END)::"ProjectStatus",
      CASE WHEN g % 2 = 0 THEN 95 END, now() - g * interval '1 hour', now() FROM generate_series(1, $3) g`,
    [orgId, tag, v.projects],
  );
  // Assets 1..usageAssets are busy and checked out to project 1 (the equipment-usage project).
  await step(
    'assets',
    `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "yardId", "checkedOutToProjectId", "createdAt", "updatedAt")
    SELECT pg_temp.uid($2 || 'a', g), $1, 'Unit ' || lpad(g::text, 6, '0'), (ARRAY['on-road','off-road','trailer'])[1 + g % 3]::"AssetClass",
      'HOURS', 'hrs', pg_temp.uid($2 || 'y', 1 + g % $4), CASE WHEN g <= $5 THEN pg_temp.uid($2 || 'p', 1) END,
      now() - g * interval '1 minute', now() FROM generate_series(1, $3) g`,
    [orgId, tag, v.assets, v.yards, v.usageAssets],
  );
  // Meter logs are partitioned by month with no DEFAULT partition: the months the readings reach back to are
  // created first, as the service creates a backdated month.
  await q(
    `SELECT fleet_month_partition('meter_logs', t)
     FROM generate_series(now() - make_interval(secs => $1), now() + interval '1 month', interval '1 month') t`,
    [oldestSec],
  );
  // The readings load without row triggers and foreign-key checks (they name rows inserted above); the project
  // rollup those triggers keep is then built from them, as its migration built it.
  await q(`SET session_replication_role = replica`);
  await step(
    'meter logs (busy assets)',
    `INSERT INTO meter_logs (id, "orgId", "assetId", "projectId", "loggedById", "hoursReading", delta, "reviewStatus", "loggedAt", "createdAt")
    SELECT pg_temp.uid($2 || 'lb', a * 10000 + k), $1, pg_temp.uid($2 || 'a', a), CASE WHEN a <= $5 THEN pg_temp.uid($2 || 'p', 1) END, $6,
      k, 1, 'NONE', now() - ($4 - k) * interval '1 hour' - a * interval '1 second', now()
    FROM generate_series(1, $3) a, generate_series(1, $4) k`,
    [orgId, tag, v.busyAssets, v.busyLogs, v.usageAssets, userId],
  );
  await step(
    'meter logs (fleet)',
    `INSERT INTO meter_logs (id, "orgId", "assetId", "projectId", "loggedById", "hoursReading", delta, "reviewStatus", "reviewReason", "loggedAt", "createdAt")
    SELECT pg_temp.uid($2 || 'l', g), $1, pg_temp.uid($2 || 'a', $4 + 1 + g % ($5 - $4)),
      CASE WHEN g % 10 < 3 THEN pg_temp.uid($2 || 'p', 2 + g % ($6 - 1)) END, $7, g / 1000.0, 2,
      (CASE WHEN g % 100 = 0 THEN 'PENDING' WHEN g % 100 = 1 THEN 'APPROVED' ELSE 'NONE' END)::"ReviewStatus",
      CASE WHEN g % 100 = 0 THEN 'jump' END, now() - make_interval(secs => g * $8::float8), now()
    FROM generate_series(1, $3) g`,
    [orgId, tag, v.otherLogs, v.busyAssets, v.assets, v.projects, userId, fleetStepSec],
  );
  await q(`SET session_replication_role = DEFAULT`);
  await step(
    'project usage rollup',
    `INSERT INTO project_asset_usage ("projectId", "assetId", "orgId", hours, "logCount", "lastLoggedAt")
     SELECT "projectId", "assetId", MIN("orgId"), SUM(delta), COUNT(*), MAX("loggedAt")
     FROM meter_logs WHERE "orgId" = $1 AND "projectId" IS NOT NULL GROUP BY "projectId", "assetId"`,
    [orgId],
  );
  await step(
    'flags',
    `INSERT INTO flags (id, "orgId", "assetId", severity, status, "raisedById", "createdAt", "updatedAt")
    SELECT pg_temp.uid($2 || 'f', g), $1, pg_temp.uid($2 || 'a', 1 + g % $4), (ARRAY['RED','YELLOW','AUTO_PM'])[1 + g % 3]::"FlagSeverity",
      (CASE WHEN g % 10 < 7 THEN 'RESOLVED' WHEN g % 10 < 9 THEN 'OPEN' ELSE 'IN_PROGRESS' END)::"FlagStatus", $5,
      now() - g * interval '10 minutes', now() FROM generate_series(1, $3) g`,
    [orgId, tag, v.flags, v.assets, userId],
  );
  await step(
    'work orders',
    `INSERT INTO work_orders (id, "orgId", number, "assetId", title, status, priority, "dueAt", "createdById", "completedAt", "createdAt", "updatedAt")
    SELECT pg_temp.uid($2 || 'w', g), $1, g, pg_temp.uid($2 || 'a', 1 + g % $4), 'Work order #' || g,
      s.status::"WorkOrderStatus", (ARRAY['LOW','NORMAL','HIGH','URGENT'])[1 + g % 4]::"WorkOrderPriority",
      CASE WHEN g % 3 = 0 THEN NULL ELSE now() + (g % 90) * interval '1 day' END, $5,
      CASE WHEN s.status = 'DONE' THEN now() END, now() - g * interval '5 minutes', now()
    FROM generate_series(1, $3) g,
      LATERAL (SELECT CASE WHEN g % 100 < 60 THEN 'DONE' WHEN g % 100 < 76 THEN 'OPEN' WHEN g % 100 < 84 THEN 'ASSIGNED'
        WHEN g % 100 < 92 THEN 'IN_PROGRESS' WHEN g % 100 < 96 THEN 'ON_HOLD' ELSE 'CANCELED' END AS status) s`,
    [orgId, tag, v.workOrders, v.assets, userId],
  );
  await q(`UPDATE organizations SET "workOrderSeq" = $2 WHERE id = $1`, [orgId, v.workOrders]);
  await step(
    'repairs',
    `INSERT INTO repairs (id, "orgId", "assetId", "workOrderId", "projectId", "laborHours", cost, "createdById", "createdAt", "updatedAt")
    SELECT pg_temp.uid($2 || 'r', g), $1, pg_temp.uid($2 || 'a', 1 + g % $4), pg_temp.uid($2 || 'w', 1 + g % $5), pg_temp.uid($2 || 'p', 1 + g % $6),
      1.5, 100 + g % 400, $7, now() - g * interval '7 minutes', now() FROM generate_series(1, $3) g`,
    [orgId, tag, v.repairs, v.assets, v.workOrders, v.projects, userId],
  );
  // Every 10th tool is a consumable (half of them low), every 10th (offset 5) has a PM interval; warranties
  // end across four years; tools 1..200 ride along with the project-1 assets.
  await step(
    'tools',
    `INSERT INTO tools (id, "orgId", name, status, "scanToken", "isConsumable", "stockLevel", "minStockLevel", "pmIntervalDays", "lastServicedAt",
      "warrantyEndDate", "checkedOutAssetId", "checkedOutToUserId", "checkedOutAt", "createdAt", "updatedAt")
    SELECT pg_temp.uid($2 || 't', g), $1, 'Tool ' || lpad(g::text, 6, '0'), (ARRAY['GOOD','GOOD','GOOD','NEEDS_ATTENTION','BROKEN'])[1 + g % 5]::"ToolStatus",
      md5($2 || 'scan' || g), g % 10 = 0, CASE WHEN g % 10 = 0 THEN g % 12 END, CASE WHEN g % 10 = 0 THEN 6 END,
      CASE WHEN g % 10 = 5 THEN 30 END, CASE WHEN g % 10 = 5 THEN now() - (g % 60) * interval '1 day' END,
      now() + ((g % 1460) - 730) * interval '1 day',
      CASE WHEN g <= 200 THEN pg_temp.uid($2 || 'a', 1 + g % $4) END, CASE WHEN g <= 200 THEN $5 END, CASE WHEN g <= 200 THEN now() - g * interval '1 hour' END,
      now() - g * interval '1 minute', now() FROM generate_series(1, $3) g`,
    [orgId, tag, v.tools, v.usageAssets, userId],
  );
  await step(
    'tool events',
    `INSERT INTO tool_events (id, "orgId", "toolId", kind, "actorId", "holderUserId", "createdAt")
    SELECT pg_temp.uid($2 || 'e', g), $1, pg_temp.uid($2 || 't', 2 + g % ($4 - 1)), (ARRAY['CHECK_OUT','CHECK_IN','CONDITION_REPORT','AUDIT'])[1 + g % 4]::"ToolEventKind",
      $5, $5, now() - g * interval '2 minutes' FROM generate_series(1, $3) g`,
    [orgId, tag, v.toolEvents, v.tools, userId],
  );
  await step(
    'tool events (busy tool)',
    `INSERT INTO tool_events (id, "orgId", "toolId", kind, "actorId", "holderUserId", "createdAt")
    SELECT pg_temp.uid($2 || 'eb', g), $1, pg_temp.uid($2 || 't', 1), (CASE WHEN g % 2 = 0 THEN 'CHECK_OUT' ELSE 'CHECK_IN' END)::"ToolEventKind",
      $4, $4, now() - g * interval '3 hours' FROM generate_series(1, $3) g`,
    [orgId, tag, v.busyToolEvents, userId],
  );
}

/** seededId without a round trip: the same md5-derived UUID text. */
export function seededIdLocal(tag: string, kind: string, n: number): string {
  const h = createHash('md5').update(`${tag}${kind}:${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The deterministic id of row n of a kind (a = asset, p = project, t = tool...) in a seeded organisation. */
export async function seededId(client: pg.ClientBase, tag: string, kind: string, n: number): Promise<string> {
  const { rows } = await client.query<{ id: string }>(`SELECT md5($1 || ':' || $2)::uuid::text AS id`, [tag + kind, n]);
  return rows[0].id;
}
