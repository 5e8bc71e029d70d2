import type { Asset } from '../../generated/prisma/client.ts';

const YEAR_MS = 365.25 * 24 * 3600 * 1000;

/**
 * Book value today. NONE: the recorded currentValue (else the purchase cost). STRAIGHT_LINE: cost falls
 * linearly to zero over the useful life. DECLINING_BALANCE: double-declining, cost x (1 - 2/life)^years.
 * Null when the cost, the purchase date or (for the depreciating methods) the useful life is missing.
 */
export function bookValue(
  a: Pick<Asset, 'purchaseCost' | 'purchaseDate' | 'usefulLifeYears' | 'depreciationMethod' | 'currentValue'>,
  now: Date,
): number | null {
  if (a.depreciationMethod === 'NONE') return a.currentValue ?? a.purchaseCost;
  if (a.purchaseCost == null || !a.purchaseDate || !a.usefulLifeYears) return null;
  const years = Math.max(0, (now.getTime() - a.purchaseDate.getTime()) / YEAR_MS);
  const value =
    a.depreciationMethod === 'STRAIGHT_LINE'
      ? a.purchaseCost * Math.max(0, 1 - years / a.usefulLifeYears)
      : a.purchaseCost * Math.pow(Math.max(0, 1 - 2 / a.usefulLifeYears), years);
  return Math.round(value * 100) / 100;
}
