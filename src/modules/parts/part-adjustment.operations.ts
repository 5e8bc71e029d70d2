// A stock adjustment of one part in one yard inside the caller's transaction: a signed change, or a count whose
// difference from the stock is the change. POST /parts/{id}/adjustments and imports (reasons initial, count) share it.
import type { Part } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { dec, round } from '../../core/money.ts';
import {
  addStock,
  ledgerId,
  lockStock,
  recordNoChange,
  takeStock,
  type LedgerEntry,
} from './part-ledger.operations.ts';
import type { AdjustmentInput } from './part-inventory.schemas.ts';

/** The ledger entry of the adjustment (a count equal to the stock writes an entry of 0: the count happened). */
export async function applyAdjustment(
  tx: Tx,
  ctx: RequestContext,
  part: Part,
  input: AdjustmentInput,
): Promise<LedgerEntry> {
  const before = await lockStock(tx, {
    orgId: ctx.orgId,
    partId: part.id,
    yardId: input.yardId,
    type: 'adjustment',
    source: null,
    actor: ctx.actorId,
  });
  const delta =
    input.countedQuantity !== undefined ? dec(input.countedQuantity).minus(before.onHand) : dec(input.quantity!);
  const id = ledgerId();
  const movement = {
    id,
    orgId: ctx.orgId,
    partId: part.id,
    yardId: input.yardId,
    type: 'adjustment' as const,
    source: { type: 'adjustment' as const, id },
    actor: ctx.actorId,
    reason: input.reason,
    note: input.note ?? null,
  };
  let entry;
  if (delta.gt(0)) {
    const unitCost = dec(input.unitCost ?? part.unitCost ?? 0);
    entry = await addStock(tx, {
      ...movement,
      unitCost,
      pieces: [{ quantity: delta, unitCost, value: round(delta.times(unitCost), 2) }],
    });
  } else if (delta.lt(0)) {
    entry = (await takeStock(tx, { ...movement, quantity: delta.neg() })).entry;
  } else {
    entry = await recordNoChange(tx, movement);
  }
  return entry;
}
