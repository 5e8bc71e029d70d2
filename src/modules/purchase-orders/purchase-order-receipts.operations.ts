// Receiving goods against a purchase order: stock, ledger and cost layers through the parts module's receiveStock,
// the order's received quantities and status, the receipt record and its event, all in the caller's transaction.
import { randomUUID } from 'node:crypto';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { dec, round, toSql, toWire } from '../../core/money.ts';
import { emit } from '../../events/outbox.ts';
import { receiveStock } from '../parts/part-ledger.operations.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import { lockOwnedPurchaseOrder, orderLines } from './purchase-orders.repository.ts';
import { assertReceivable, planReceipt, statusAfterReceipt } from './purchase-orders.rules.ts';
import type { ReceiptInput } from './purchase-orders.schemas.ts';

/** A receipt may be dated back, not ahead: a minute of clock skew between client and server is tolerated. */
const FUTURE_TOLERANCE_MS = 60_000;

/**
 * Records one receipt. The order's row lock is taken first, so concurrent receipts of one order run one after the
 * other and the second sees what the first received: together they never receive more than was ordered.
 */
export async function receivePurchaseOrder(tx: Tx, ctx: RequestContext, id: string, input: ReceiptInput) {
  const po = await lockOwnedPurchaseOrder(tx, ctx.orgId, id);
  assertReceivable(po.status);
  const receivedAt = input.receivedAt ?? new Date();
  if (receivedAt.getTime() > Date.now() + FUTURE_TOLERANCE_MS)
    throw new ValidationError({ receivedAt: 'cannot be in the future' });
  if (!po.yardId)
    throw new ValidationError({ yardId: 'the order’s yard was deleted; stock cannot be received into it' });
  const yardId = po.yardId;
  const lines = (await orderLines(tx, ctx.orgId, id)).map((l) => ({
    id: l.id,
    partId: l.partId,
    quantity: dec(l.quantity),
    unitCost: dec(l.unitCost),
    received: dec(l.received),
  }));
  const planned = planReceipt(lines, input.lines);
  const receiptId = randomUUID();
  const received = [];
  for (const p of planned) {
    const entry = await receiveStock(tx, {
      orgId: ctx.orgId,
      partId: p.line.partId,
      yardId,
      quantity: p.quantity,
      unitCost: p.unitCost,
      source: { type: 'purchase_order', id },
      actor: ctx.actorId,
      note: `Purchase order #${po.number}`,
      occurredAt: receivedAt,
    });
    p.line.received = p.line.received.plus(p.quantity);
    await tx.purchaseOrderLine.update({ where: { id: p.line.id }, data: { received: toSql(p.line.received) } });
    received.push({
      lineId: p.line.id,
      partId: p.line.partId,
      quantity: toWire(p.quantity, 4),
      unitCost: toWire(p.unitCost, 4),
      totalCost: toWire(entry ? entry.totalCost : round(p.quantity.times(p.unitCost), 2)),
      // A part that does not track inventory is received on the order but moves no stock.
      ledgerEntryId: entry?.id ?? null,
    });
  }
  const status = statusAfterReceipt(lines);
  await tx.purchaseOrder.update({ where: { id }, data: { status } });
  await tx.purchaseOrderReceipt.create({
    data: {
      id: receiptId,
      orgId: ctx.orgId,
      purchaseOrderId: id,
      lines: received,
      receivedAt,
      createdById: ctx.actorId,
    },
  });
  const currency = await orgCurrency(tx, ctx.orgId);
  await emit(tx, ctx.orgId, 'purchase_order.received', {
    purchaseOrderId: id,
    number: po.number,
    status,
    yardId,
    receiptId,
    lines: received,
    currency,
    receivedAt: receivedAt.toISOString(),
    actorId: ctx.actorId,
  });
  return {
    ok: true as const,
    currency,
    receiptId,
    purchaseOrderId: id,
    number: po.number,
    status,
    yardId,
    receivedAt: receivedAt.toISOString(),
    lines: received,
  };
}
