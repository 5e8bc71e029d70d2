import type { z } from 'zod';
import type { Project } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import { ValidationError } from '../../core/errors.ts';
import type { EquipmentUsage, EquipmentUsagePage } from './project-usage.schemas.ts';

/** Money and hours on the wire: two decimals, so float sums like 0.1 + 0.2 read as 0.3. */
const round2 = (n: number) => Math.round(n * 100) / 100;

const badCursor = (field: string) => new ValidationError({ [field]: 'is not a cursor returned by this endpoint' });

/** decodeCursor, with the error naming this endpoint's cursor parameter. */
function decode(cursor: string | undefined, arity: number, field: string) {
  try {
    return decodeCursor(cursor, arity);
  } catch {
    throw badCursor(field);
  }
}

function assetCursor(cursor: string | undefined): [number, string, string] | null {
  const v = decode(cursor, 3, 'assetsCursor');
  if (!v) return null;
  const [hours, nickname, id] = v;
  if (typeof hours !== 'number' || typeof nickname !== 'string' || typeof id !== 'string')
    throw badCursor('assetsCursor');
  return [hours, nickname, id];
}

function toolCursor(cursor: string | undefined): [string, string] | null {
  const v = decode(cursor, 2, 'toolsCursor');
  if (!v) return null;
  const [name, id] = v;
  if (typeof name !== 'string' || typeof id !== 'string') throw badCursor('toolsCursor');
  return [name, id];
}

interface AssetRow {
  assetId: string;
  nickname: string;
  hoursLogged: number;
  lastLoggedAt: Date | null;
  logCount: number;
  currentlyOnProject: boolean;
}
interface ToolRow {
  toolId: string;
  name: string;
  checkedOutAt: Date | null;
  linkedAssetId: string;
}

/**
 * The rollup's assets: every asset with a meter log recorded against the project, plus assets checked out
 * to it now. Hours are the per-asset delta sums rounded to cents (numeric, so the total of the rounded
 * values is exact). The sums come from project_asset_usage, which triggers keep in step with meter_logs,
 * so the cost follows the project's assets, not its logs; totals and one sorted page come out of one statement.
 * The LIMIT 1 keeps the lateral lookup from being flattened back into a join.
 */
const ASSETS_SQL = `
  WITH per_asset AS (
    SELECT "assetId", hours, "logCount" AS n, "lastLoggedAt" AS last
    FROM project_asset_usage WHERE "projectId" = $2 AND "orgId" = $1
  ), rollup AS (
    SELECT a.id AS "assetId", a.nickname, round(coalesce(l.hours, 0)::numeric, 2) AS hours, l.last AS "lastLoggedAt",
      coalesce(l.n, 0) AS "logCount", a."checkedOutToProjectId" IS NOT DISTINCT FROM $2 AS "currentlyOnProject"
    FROM (SELECT "assetId" AS id FROM per_asset UNION SELECT id FROM assets WHERE "checkedOutToProjectId" = $2 AND "orgId" = $1) ids
    -- One primary-key lookup per asset of the project. As a plain join the planner, estimating the project's
    -- asset count from the average project, hashed all of the organisation's assets (a 100,000-row scan).
    CROSS JOIN LATERAL (
      SELECT id, nickname, "checkedOutToProjectId" FROM assets WHERE id = ids.id AND "orgId" = $1 LIMIT 1
    ) a
    LEFT JOIN per_asset l ON l."assetId" = a.id
  ), page AS (
    SELECT * FROM rollup
    WHERE $3::numeric IS NULL OR hours < $3::numeric OR (hours = $3::numeric AND (nickname, "assetId") > ($4::text, $5::text))
    ORDER BY hours DESC, nickname, "assetId" LIMIT $6
  )
  SELECT (SELECT count(*)::int FROM rollup) AS "assetCount", (SELECT coalesce(sum(hours), 0)::float8 FROM rollup) AS "totalHours",
    (SELECT coalesce(sum(cost), 0)::float8 FROM repairs WHERE "projectId" = $2 AND "orgId" = $1) AS "repairCost",
    coalesce((SELECT json_agg(json_build_object('assetId', "assetId", 'nickname', nickname, 'hoursLogged', hours::float8,
      'lastLoggedAt', "lastLoggedAt", 'logCount', "logCount", 'currentlyOnProject', "currentlyOnProject")
      ORDER BY hours DESC, nickname, "assetId") FROM page), '[]'::json) AS rows`;

/** Tools checked out now whose linked asset or vehicle is an asset checked out to the project, in name order. */
const TOOLS_SQL = `
  WITH on_project AS (SELECT id FROM assets WHERE "checkedOutToProjectId" = $2 AND "orgId" = $1),
  -- Two index lookups (tools(checkedOutAssetId), tools(checkedOutVehicleId)), disjoint: an OR of the two
  -- would scan every tool.
  riding AS (
    SELECT t.id AS "toolId", t.name, t."checkedOutAt", t."checkedOutAssetId" AS "linkedAssetId"
    FROM on_project o JOIN tools t ON t."checkedOutAssetId" = o.id
    WHERE t."orgId" = $1 AND t."checkedOutAt" IS NOT NULL
    UNION ALL
    SELECT t.id, t.name, t."checkedOutAt", t."checkedOutVehicleId"
    FROM on_project o JOIN tools t ON t."checkedOutVehicleId" = o.id
    WHERE t."orgId" = $1 AND t."checkedOutAt" IS NOT NULL
      AND (t."checkedOutAssetId" IS NULL OR t."checkedOutAssetId" NOT IN (SELECT id FROM on_project))
  )
  SELECT (SELECT count(*)::int FROM riding) AS "toolCount",
    coalesce((SELECT json_agg(p ORDER BY p.name, p."toolId") FROM (
      SELECT * FROM riding WHERE $3::text IS NULL OR (name, "toolId") > ($3::text, $4::text) ORDER BY name, "toolId" LIMIT $5
    ) p), '[]'::json) AS rows`;

/**
 * The usage rollup of one project: exact totals over every asset, with the per-asset and per-tool arrays
 * paged (largest first for assets), so the response stays bounded however much the project logged.
 */
export async function equipmentUsage(
  sql: SqlRunner,
  project: Project,
  page: EquipmentUsagePage,
): Promise<z.input<typeof EquipmentUsage>> {
  const { orgId, id: projectId } = project;
  const after = assetCursor(page.assetsCursor);
  const toolsAfter = toolCursor(page.toolsCursor);
  const [assetPart] = await sql.query<{
    assetCount: number;
    totalHours: number;
    repairCost: number;
    rows: (Omit<AssetRow, 'lastLoggedAt'> & { lastLoggedAt: string | null })[];
  }>(
    ASSETS_SQL,
    [orgId, projectId, after?.[0] ?? null, after?.[1] ?? null, after?.[2] ?? null, page.assetsLimit + 1],
    'project-usage-assets',
  );
  const [toolPart] = await sql.query<{
    toolCount: number;
    rows: (Omit<ToolRow, 'checkedOutAt'> & { checkedOutAt: string | null })[];
  }>(
    TOOLS_SQL,
    [orgId, projectId, toolsAfter?.[0] ?? null, toolsAfter?.[1] ?? null, page.toolsLimit + 1],
    'project-usage-tools',
  );

  const rate = project.hourlyRate;
  const withRevenue = (hours: number) => (rate == null ? {} : { estimatedRevenueUsd: round2(hours * rate) });
  const assets = assetPart.rows.slice(0, page.assetsLimit);
  const tools = toolPart.rows.slice(0, page.toolsLimit);
  const lastAsset = assets[assets.length - 1];
  const lastTool = tools[tools.length - 1];
  const totalHours = round2(assetPart.totalHours);
  const iso = (at: string | null) => (at === null ? null : new Date(at).toISOString());
  return {
    projectId,
    projectName: project.name,
    hourlyRateUsd: rate,
    totalHoursLogged: totalHours,
    totalRepairCostUsd: round2(assetPart.repairCost),
    ...withRevenue(totalHours),
    assets: assets.map((a) => ({
      assetId: a.assetId,
      nickname: a.nickname,
      hoursLogged: a.hoursLogged,
      lastLoggedAt: iso(a.lastLoggedAt),
      logCount: a.logCount,
      currentlyOnProject: a.currentlyOnProject,
      ...withRevenue(a.hoursLogged),
    })),
    tools: tools.map((t) => ({
      toolId: t.toolId,
      name: t.name,
      currentlyOnProject: true,
      checkedOutAt: iso(t.checkedOutAt),
      linkedAssetId: t.linkedAssetId,
    })),
    assetCount: assetPart.assetCount,
    assetsNextCursor:
      assetPart.rows.length > page.assetsLimit
        ? encodeCursor([lastAsset.hoursLogged, lastAsset.nickname, lastAsset.assetId])
        : null,
    toolCount: toolPart.toolCount,
    toolsNextCursor: toolPart.rows.length > page.toolsLimit ? encodeCursor([lastTool.name, lastTool.toolId]) : null,
  };
}
