import type { InventoryEntryType } from '../../generated/prisma/client.ts';
import { Dec, round, ZERO } from '../../core/money.ts';

export type LedgerSourceType = 'work_order' | 'purchase_order' | 'transfer' | 'adjustment';

export interface LedgerSource {
  type: LedgerSourceType;
  id: string;
}

/** One row of the inventory ledger, numbers as exact decimals. */
export interface LedgerEntry {
  id: string;
  orgId: string;
  partId: string;
  yardId: string;
  type: InventoryEntryType;
  /** Signed: negative for issues, transfers out and negative adjustments. */
  quantity: Dec;
  previousQuantity: Dec;
  currentQuantity: Dec;
  unitCost: Dec;
  totalCost: Dec;
  reason: string | null;
  note: string | null;
  source: LedgerSource | null;
  createdAt: Date;
  createdById: string | null;
}

/** Stock coming in or going out at one cost: a cost layer, or the part of one a movement took. */
export interface LayerPiece {
  quantity: Dec;
  unitCost: Dec;
  /** Exact to the cent: the pieces of a movement add up to its total cost. */
  value: Dec;
  /** The layer's age, kept when stock moves between yards so FIFO still takes the oldest first. */
  receivedAt?: Date;
}

export interface OpenLayer {
  id: string;
  remaining: Dec;
  remainingValue: Dec;
  receivedAt: Date;
}

/**
 * Takes `quantity` from open layers, oldest first. A layer emptied gives its whole remaining value; a layer
 * partly taken gives its value pro rata, rounded half-up to the cent, so what is taken and what stays always add
 * up to what was received (FIFO and AVERAGE alike: AVERAGE simply has one layer).
 */
export function takeFromLayers(layers: OpenLayer[], quantity: Dec) {
  const pieces: LayerPiece[] = [];
  const updates: { id: string; remaining: Dec; remainingValue: Dec }[] = [];
  let need = quantity;
  for (const layer of layers) {
    if (need.lte(0)) break;
    const take = Dec.min(need, layer.remaining);
    const value = take.eq(layer.remaining)
      ? layer.remainingValue
      : round(layer.remainingValue.times(take).div(layer.remaining), 2);
    pieces.push({ quantity: take, unitCost: value.div(take), value, receivedAt: layer.receivedAt });
    updates.push({
      id: layer.id,
      remaining: layer.remaining.minus(take),
      remainingValue: layer.remainingValue.minus(value),
    });
    need = need.minus(take);
  }
  // Stock without layers cannot happen (every increase writes one); costed at zero rather than refused if it did.
  if (need.gt(0)) pieces.push({ quantity: need, unitCost: ZERO, value: ZERO });
  return { pieces, updates };
}

/** A movement crosses the reorder point when it takes the stock from above it to at or below it. */
export const crossedReorderPoint = (before: Dec, after: Dec, reorderPoint: Dec | null): boolean =>
  reorderPoint !== null && before.gt(reorderPoint) && after.lte(reorderPoint);
