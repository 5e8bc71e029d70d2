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
