import { z } from 'zod';
import type { Project } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { dateTime } from '../../http/schemas.ts';

const revenue = () => z.number().optional().describe('Present only when the project has an hourlyRate: hours x rate');

export const EquipmentUsage = z
  .object({
    projectId: z.string(),
    projectName: z.string(),
    hourlyRateUsd: z.number().nullable(),
    totalHoursLogged: z.number(),
    totalRepairCostUsd: z.number(),
    estimatedRevenueUsd: revenue(),
    assets: z.array(
      z.object({
        assetId: z.string(),
        nickname: z.string(),
        hoursLogged: z.number().describe('Sum of the deltas of the meter logs recorded against the project (corrections count negative)'),
        lastLoggedAt: dateTime().nullable(),
        logCount: z.number().int(),
        currentlyOnProject: z.boolean().describe('The asset is checked out to the project now'),
        estimatedRevenueUsd: revenue(),
      }),
    ),
    tools: z.array(
      z.object({
        toolId: z.string(),
        name: z.string(),
        currentlyOnProject: z.boolean(),
        checkedOutAt: dateTime().nullable(),
        linkedAssetId: z.string().describe('The asset checked out to the project that the tool went out with'),
      }),
    ),
  })
  .meta({ id: 'ProjectEquipmentUsage' });

export const EquipmentUsageResponse = z.object({ ok: z.literal(true), usage: EquipmentUsage });

/** Money and hours on the wire: two decimals, so float sums like 0.1 + 0.2 read as 0.3. */
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The usage rollup of one project. Assets: every asset with a meter log recorded against the project,
 * plus assets checked out to it now. Tools: tools checked out now whose linked asset or vehicle is an
 * asset currently checked out to the project (a tool rides along with the machine it went out with).
 */
export async function equipmentUsage(tx: Tx, project: Project): Promise<z.input<typeof EquipmentUsage>> {
  const { orgId, id: projectId } = project;
  const logs = await tx.meterLog.groupBy({
    by: ['assetId'],
    where: { orgId, projectId },
    _sum: { delta: true },
    _count: { _all: true },
    _max: { loggedAt: true },
  });
  const assets = await tx.asset.findMany({
    where: { orgId, OR: [{ id: { in: logs.map((l) => l.assetId) } }, { checkedOutToProjectId: projectId }] },
    select: { id: true, nickname: true, checkedOutToProjectId: true },
  });
  const repairs = await tx.repair.aggregate({ where: { orgId, projectId }, _sum: { cost: true } });
  const onProject = assets.filter((a) => a.checkedOutToProjectId === projectId).map((a) => a.id);
  const tools = onProject.length
    ? await tx.tool.findMany({
        where: {
          orgId, checkedOutAt: { not: null },
          OR: [{ checkedOutAssetId: { in: onProject } }, { checkedOutVehicleId: { in: onProject } }],
        },
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
        select: { id: true, name: true, checkedOutAt: true, checkedOutAssetId: true, checkedOutVehicleId: true },
      })
    : [];

  const rate = project.hourlyRate;
  const withRevenue = (hours: number) => (rate == null ? {} : { estimatedRevenueUsd: round2(hours * rate) });
  const byAsset = new Map(logs.map((l) => [l.assetId, l]));
  const rows = assets
    .map((a) => {
      const l = byAsset.get(a.id);
      const hours = round2(l?._sum.delta ?? 0);
      return {
        assetId: a.id, nickname: a.nickname, hoursLogged: hours, lastLoggedAt: l?._max.loggedAt?.toISOString() ?? null,
        logCount: l?._count._all ?? 0, currentlyOnProject: a.checkedOutToProjectId === projectId, ...withRevenue(hours),
      };
    })
    .sort((x, y) => y.hoursLogged - x.hoursLogged || x.nickname.localeCompare(y.nickname) || x.assetId.localeCompare(y.assetId));
  const totalHours = round2(rows.reduce((sum, r) => sum + r.hoursLogged, 0));
  const onProjectSet = new Set(onProject);
  return {
    projectId, projectName: project.name, hourlyRateUsd: rate, totalHoursLogged: totalHours,
    totalRepairCostUsd: round2(repairs._sum.cost ?? 0), ...withRevenue(totalHours),
    assets: rows,
    tools: tools.map((t) => ({
      toolId: t.id, name: t.name, currentlyOnProject: true, checkedOutAt: t.checkedOutAt?.toISOString() ?? null,
      linkedAssetId: (t.checkedOutAssetId && onProjectSet.has(t.checkedOutAssetId) ? t.checkedOutAssetId : t.checkedOutVehicleId) as string,
    })),
  };
}
