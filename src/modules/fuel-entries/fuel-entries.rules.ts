// The pure rules of a fill: litres from any unit, and the price a pump shows from the total or the other way round.
import { Dec, dec, round } from '../../core/money.ts';

export const FUEL_ENTRY_UNITS = ['GALLON', 'GALLON_UK', 'LITER'] as const;
export type FuelEntryUnit = (typeof FUEL_ENTRY_UNITS)[number];

/** Litres per unit: the US gallon (231 cubic inches) and the imperial gallon, both exact by definition. */
export const LITERS_PER: Record<FuelEntryUnit, Dec> = {
  GALLON: new Dec('3.785411784'),
  GALLON_UK: new Dec('4.54609'),
  LITER: new Dec(1),
};

export const toLiters = (volume: Dec, unit: FuelEntryUnit): Dec => volume.times(LITERS_PER[unit]);

export interface FillPrice {
  totalCost: Dec;
  pricePerUnit: Dec;
}

/**
 * Exactly one of the total and the price per unit is given; the other is derived, half-up: the total to the
 * cent, the price per unit to three decimals (as pumps show it). Null when both or neither are given.
 */
export function fillPrice(
  volume: Dec,
  given: { totalCost?: number | null; pricePerUnit?: number | null },
): FillPrice | null {
  const hasTotal = given.totalCost != null;
  const hasPrice = given.pricePerUnit != null;
  if (hasTotal === hasPrice) return null;
  if (hasTotal) {
    const totalCost = dec(given.totalCost!);
    return { totalCost, pricePerUnit: volume.isZero() ? new Dec(0) : round(totalCost.div(volume), 3) };
  }
  const pricePerUnit = dec(given.pricePerUnit!);
  return { pricePerUnit, totalCost: round(volume.times(pricePerUnit), 2) };
}

/**
 * Whether an asset may take a new fill dated `fueledAt`. A SOLD asset takes fills up to its sale (a fuel card
 * settles days later); an ARCHIVED one takes none; no fill may predate the purchase. Null when it may.
 */
export function fillRefusal(
  asset: { lifecycleStatus: string; soldAt: Date | null; purchaseDate: Date | null },
  fueledAt: Date,
): { field: string; message: string } | null {
  if (asset.purchaseDate && fueledAt < asset.purchaseDate)
    return { field: 'fueledAt', message: `is before the asset's purchaseDate (${asset.purchaseDate.toISOString()})` };
  if (asset.lifecycleStatus === 'ARCHIVED')
    return { field: 'assetId', message: 'the asset is ARCHIVED: it takes no new fills' };
  if (asset.lifecycleStatus === 'SOLD' && (!asset.soldAt || fueledAt > asset.soldAt))
    return {
      field: 'fueledAt',
      message: `is after the asset was sold${asset.soldAt ? ` (${asset.soldAt.toISOString()})` : ''}`,
    };
  return null;
}
