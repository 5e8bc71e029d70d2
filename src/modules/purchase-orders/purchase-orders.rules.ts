import type { PurchaseOrderStatus } from '../../generated/prisma/client.ts';
import { conflict, ValidationError, type FieldErrors } from '../../core/errors.ts';
import { dec, round, sum, type Dec } from '../../core/money.ts';

export type PurchaseOrderAction = 'submit' | 'approve' | 'reject' | 'cancel' | 'close';
export const PURCHASE_ORDER_ACTIONS: readonly PurchaseOrderAction[] = [
  'submit',
  'approve',
  'reject',
  'cancel',
  'close',
];

/**
 * The moves each action makes: DRAFT -> SUBMITTED -> APPROVED (or REJECTED); receipts take APPROVED on to
 * PARTIALLY_RECEIVED and RECEIVED; RECEIVED -> CLOSED; CANCELLED from DRAFT, SUBMITTED or APPROVED. Nothing else.
 */
const MOVES: Record<PurchaseOrderAction, { from: readonly PurchaseOrderStatus[]; to: PurchaseOrderStatus }> = {
  submit: { from: ['DRAFT'], to: 'SUBMITTED' },
  approve: { from: ['SUBMITTED'], to: 'APPROVED' },
  reject: { from: ['SUBMITTED'], to: 'REJECTED' },
  cancel: { from: ['DRAFT', 'SUBMITTED', 'APPROVED'], to: 'CANCELLED' },
  close: { from: ['RECEIVED'], to: 'CLOSED' },
};

/** Statuses a receipt may be recorded in. */
export const RECEIVABLE_STATUSES: readonly PurchaseOrderStatus[] = ['APPROVED', 'PARTIALLY_RECEIVED'];

const invalidMove = (message: string) => conflict('invalid_status_transition', message);

/** The status `action` moves an order in `from` to; 409 invalid_status_transition when it may not. */
export function nextStatus(from: PurchaseOrderStatus, action: PurchaseOrderAction): PurchaseOrderStatus {
  const move = MOVES[action];
  if (!move.from.includes(from))
    throw invalidMove(`The purchase order is ${from}; ${action} needs it ${move.from.join(' or ')}`);
  return move.to;
}

/** Only a DRAFT order changes its vendor, yard, notes, costs or lines. */
export function assertEditable(status: PurchaseOrderStatus): void {
  if (status !== 'DRAFT') throw invalidMove(`The purchase order is ${status}; only a DRAFT order can be changed`);
}

export function assertReceivable(status: PurchaseOrderStatus): void {
  if (!RECEIVABLE_STATUSES.includes(status))
    throw invalidMove(`The purchase order is ${status}; receipts need it APPROVED or PARTIALLY_RECEIVED`);
}

/** What a submission needs, as field errors (empty when it may be submitted). */
export function submitProblems(order: {
  vendorId: string | null;
  vendorArchived: boolean;
  yardId: string | null;
  lineCount: number;
}): FieldErrors {
  const errors: FieldErrors = {};
  if (!order.vendorId) errors.vendorId = 'is required to submit the order';
  else if (order.vendorArchived) errors.vendorId = 'this vendor is archived';
  if (!order.yardId) errors.yardId = 'is required to submit the order: received stock goes there';
  if (order.lineCount === 0) errors.lines = 'an order needs at least one line to be submitted';
  return errors;
}

/** A line's amount: quantity x unit cost, half-up to the cent. */
export const lineTotal = (quantity: Dec, unitCost: Dec): Dec => round(quantity.times(unitCost), 2);

export function orderSubtotal(lines: { quantity: Dec; unitCost: Dec }[]): Dec {
  return sum(lines.map((l) => lineTotal(l.quantity, l.unitCost)));
}

/** The status after a receipt: RECEIVED once every line is received in full. */
export function statusAfterReceipt(lines: { quantity: Dec; received: Dec }[]): PurchaseOrderStatus {
  return lines.every((l) => l.received.gte(l.quantity)) ? 'RECEIVED' : 'PARTIALLY_RECEIVED';
}

export interface OrderLineState {
  id: string;
  partId: string;
  quantity: Dec;
  unitCost: Dec;
  received: Dec;
}
export interface ReceiptRequestLine {
  lineId: string;
  quantity: number;
  unitCost?: number;
}
export interface PlannedReceiptLine {
  line: OrderLineState;
  quantity: Dec;
  unitCost: Dec;
}

/**
 * Checks a receipt against the order's lines and plans it: each request line names a line of this order once and
 * receives at most what remains on it (422 naming `lines.<i>.<field>` otherwise). The cost defaults to the line's.
 */
export function planReceipt(lines: OrderLineState[], requested: ReceiptRequestLine[]): PlannedReceiptLine[] {
  const byId = new Map(lines.map((l) => [l.id, l]));
  const errors: FieldErrors = {};
  const seen = new Set<string>();
  const planned: PlannedReceiptLine[] = [];
  requested.forEach((r, i) => {
    const line = byId.get(r.lineId);
    if (!line) {
      errors[`lines.${i}.lineId`] = 'is not a line of this purchase order';
      return;
    }
    if (seen.has(r.lineId)) {
      errors[`lines.${i}.lineId`] = 'names a line already received earlier in this request';
      return;
    }
    seen.add(r.lineId);
    const quantity = dec(r.quantity);
    const remaining = line.quantity.minus(line.received);
    if (quantity.gt(remaining)) {
      errors[`lines.${i}.quantity`] =
        `is more than the ${remaining.toFixed()} still to receive on this line (ordered ${line.quantity.toFixed()})`;
      return;
    }
    planned.push({ line, quantity, unitCost: r.unitCost === undefined ? line.unitCost : dec(r.unitCost) });
  });
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return planned;
}
