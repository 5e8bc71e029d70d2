import type { Prisma } from '../../generated/prisma/client.ts';
import type { Database } from '../../db/database.ts';

/** A repair is anomalous when it costs more than this multiple of the asset's median prior repair cost. */
export const ANOMALY_FACTOR = 3;
/** Fewer prior priced repairs than this is not a history to judge by. */
export const MIN_HISTORY = 3;
/** The most recent prior repairs considered, so old price levels fade out. */
export const HISTORY_WINDOW = 50;

export type CostVerdict = 'NORMAL' | 'ANOMALOUS' | 'INSUFFICIENT_HISTORY';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function judgeCost(cost: number, priorCosts: number[]) {
  if (priorCosts.length < MIN_HISTORY) {
    return { verdict: 'INSUFFICIENT_HISTORY' as CostVerdict, medianPriorCost: null, ratio: null };
  }
  const m = median(priorCosts);
  const ratio = Math.round((cost / m) * 100) / 100;
  return { verdict: (cost > ANOMALY_FACTOR * m ? 'ANOMALOUS' : 'NORMAL') as CostVerdict, medianPriorCost: m, ratio };
}

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
