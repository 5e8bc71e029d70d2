import { z } from 'zod';
import { cursorQuery, dateTime } from '../../core/schemas.ts';

const revenue = () => z.number().optional().describe('Present only when the project has an hourlyRate: hours x rate');

export const EquipmentUsage = z
  .object({
    projectId: z.string(),
    projectName: z.string(),
    hourlyRateUsd: z.number().nullable(),
    totalHoursLogged: z.number(),
    totalRepairCostUsd: z.number(),
    estimatedRevenueUsd: revenue(),
    assets: z
      .array(
        z.object({
          assetId: z.string(),
          nickname: z.string(),
          hoursLogged: z
            .number()
            .describe('Sum of the deltas of the meter logs recorded against the project (corrections count negative)'),
          lastLoggedAt: dateTime().nullable(),
          logCount: z.number().int(),
          currentlyOnProject: z.boolean().describe('The asset is checked out to the project now'),
          estimatedRevenueUsd: revenue(),
        }),
      )
      .describe(
        'One page, most hours first (then nickname, assetId); assetsLimit (default 100) rows; assetsNextCursor leads to the next',
      ),
    tools: z
      .array(
        z.object({
          toolId: z.string(),
          name: z.string(),
          currentlyOnProject: z.boolean(),
          checkedOutAt: dateTime().nullable(),
          linkedAssetId: z.string().describe('The asset checked out to the project that the tool went out with'),
        }),
      )
      .describe('One page in name order (toolsLimit, default 100); toolsNextCursor leads to the next'),
    assetCount: z.number().int().describe('Assets in the rollup (the totals cover all of them, not only this page)'),
    assetsNextCursor: z
      .string()
      .nullable()
      .describe('Pass as assetsCursor for the next page of assets; null on the last'),
    toolCount: z.number().int().describe("Tools riding with the project's assets now"),
    toolsNextCursor: z.string().nullable().describe('Pass as toolsCursor for the next page of tools; null on the last'),
  })
  .meta({ id: 'ProjectEquipmentUsage' });

export const EquipmentUsageResponse = z.object({ ok: z.literal(true), usage: EquipmentUsage });

const pageLimit = (what: string) =>
  z.coerce
    .number()
    .int()
    .optional()
    .transform((n) => Math.min(Math.max(n ?? 100, 1), 500))
    .describe(`${what} per page, default 100; values outside 1-500 are clamped`);

export const EquipmentUsageQuery = z.object({
  assetsLimit: pageLimit('Assets'),
  assetsCursor: cursorQuery.describe('The assetsNextCursor of the previous response'),
  toolsLimit: pageLimit('Tools'),
  toolsCursor: cursorQuery.describe('The toolsNextCursor of the previous response'),
});
export type EquipmentUsagePage = z.output<typeof EquipmentUsageQuery>;
