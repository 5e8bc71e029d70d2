import type { Prisma } from '../../generated/prisma/client.ts';
import type { Database } from '../../db/database.ts';
import { ANOMALY_FACTOR, HISTORY_WINDOW, judgeCost, MIN_HISTORY, type CostVerdict } from './repair-anomaly.rules.ts';

/**
 * Compares a repair's cost with the asset's earlier priced repairs and records the verdict in
 * meta.costAnomaly. Runs in the background after the repair is committed; other meta keys are kept.
 */
export async function checkRepairCost(db: Database, orgId: string, repairId: string): Promise<CostVerdict | null> {
  const repair = await db.prisma.repair.findFirst({ where: { id: repairId, orgId } });
  if (!repair || !repair.assetId || !repair.cost || repair.cost <= 0) return null;
  const prior = await db.prisma.repair.findMany({
    where: {
      orgId,
      assetId: repair.assetId,
      id: { not: repair.id },
      cost: { gt: 0 },
      OR: [{ createdAt: { lt: repair.createdAt } }, { createdAt: repair.createdAt, id: { lt: repair.id } }],
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: HISTORY_WINDOW,
    select: { cost: true },
  });
  const priorCosts = prior.map((p) => p.cost as number);
  const judged = judgeCost(repair.cost, priorCosts);
  const costAnomaly = {
    checkedAt: new Date().toISOString(),
    verdict: judged.verdict,
    cost: repair.cost,
    priorRepairCount: priorCosts.length,
    medianPriorCost: judged.medianPriorCost,
    ratio: judged.ratio,
    rule: `cost > ${ANOMALY_FACTOR} x median of the asset's last ${HISTORY_WINDOW} priced repairs (needs ${MIN_HISTORY})`,
  };
  const meta = repair.meta && typeof repair.meta === 'object' && !Array.isArray(repair.meta) ? repair.meta : {};
  await db.prisma.repair.update({
    where: { id: repair.id },
    data: { meta: { ...(meta as Prisma.JsonObject), costAnomaly } },
  });
  return judged.verdict;
}
