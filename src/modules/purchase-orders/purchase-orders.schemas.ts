import { z } from 'zod';
import type { PurchaseOrder, PurchaseOrderLine, PurchaseOrderStatus } from '../../generated/prisma/client.ts';
import { csvEnum, cursorQuery, dateTime, dateTimeInput, iso, limitQuery, optionalText } from '../../core/schemas.ts';
import { dec, decimalNumber, moneyAmount, toWire, unitCost } from '../../core/money.ts';
import { lineTotal } from './purchase-orders.rules.ts';

export const PURCHASE_ORDER_STATUSES = [
  'DRAFT',
  'SUBMITTED',
  'APPROVED',
  'REJECTED',
  'PARTIALLY_RECEIVED',
  'RECEIVED',
  'CLOSED',
  'CANCELLED',
] as const satisfies readonly PurchaseOrderStatus[];

export const PURCHASE_ORDER_LINES_MAX = 200;
export const PURCHASE_ORDER_CURRENCY_NOTE = "Amounts are in the organisation's currency, named once as `currency`";

/** A quantity of a part: more than zero, at most 4 decimals (litres of oil, metres of hose). */
const quantity = () => decimalNumber(4, { max: 1_000_000_000 }).refine((n) => n > 0, 'must be more than 0');

const LineInput = z.object({
  partId: z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }).min(1),
  quantity: quantity(),
  unitCost: unitCost(),
});

const orderFields = {
  vendorId: z.string().min(1).nullable().optional().describe('A vendor in use; required to submit'),
  yardId: z.string().min(1).nullable().optional().describe('The yard receiving the stock; required to submit'),
  lines: z
    .array(LineInput)
    .max(PURCHASE_ORDER_LINES_MAX, `an order has at most ${PURCHASE_ORDER_LINES_MAX} lines`)
    .optional()
    .describe('The whole list of lines; on PATCH it replaces the order’s lines'),
  shippingCost: moneyAmount().optional().describe('Default 0'),
  taxTotal: moneyAmount().optional().describe('Default 0'),
  notes: optionalText(5000),
};

export const CreatePurchaseOrderBody = z
  .object(orderFields)
  .describe('A DRAFT order; every field is optional; unknown fields are ignored');
export type CreatePurchaseOrderInput = z.output<typeof CreatePurchaseOrderBody>;

export const UPDATABLE_PURCHASE_ORDER_FIELDS = [
  'vendorId',
  'yardId',
  'lines',
  'shippingCost',
  'taxTotal',
  'notes',
] as const;
export const UpdatePurchaseOrderBody = z
  .object(orderFields)
  .describe('Any subset of the order fields, only in DRAFT; null clears vendorId, yardId or notes')
  .meta({ minProperties: 1 });
export type UpdatePurchaseOrderInput = z.output<typeof UpdatePurchaseOrderBody>;

export const ListPurchaseOrdersQuery = z.object({
  status: csvEnum(PURCHASE_ORDER_STATUSES, PURCHASE_ORDER_STATUSES),
  vendorId: z.string().min(1).optional(),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type ListPurchaseOrdersInput = z.output<typeof ListPurchaseOrdersQuery>;

export const ReceiptBody = z
  .object({
    lines: z
      .array(
        z.object({
          lineId: z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }).min(1),
          quantity: quantity(),
          unitCost: unitCost().optional().describe('The cost actually paid; default the line’s unitCost'),
        }),
      )
      .min(1, 'a receipt needs at least one line')
      .max(PURCHASE_ORDER_LINES_MAX),
    receivedAt: dateTimeInput().optional().describe('When the goods arrived; default now; not in the future'),
  })
  .describe('The quantities received now, per order line');
export type ReceiptInput = z.output<typeof ReceiptBody>;

// ---- responses

const money = () => z.number().describe('An amount, at most 2 decimals');
const cost = () => z.number().describe('A unit cost, at most 4 decimals');

export const PurchaseOrderLineRow = z
  .object({
    id: z.string(),
    partId: z.string(),
    quantity: z.number(),
    unitCost: cost(),
    total: money().describe('quantity x unitCost, half-up to the cent'),
    received: z.number().describe('Received so far'),
  })
  .meta({ id: 'PurchaseOrderLine' });

export const PurchaseOrderRow = z
  .object({
    id: z.string(),
    number: z.number().int().describe('1, 2, 3... in each organisation'),
    status: z.enum(PURCHASE_ORDER_STATUSES),
    vendorId: z.string().nullable(),
    yardId: z.string().nullable(),
    subtotal: money().describe('The sum of the line totals'),
    shippingCost: money(),
    taxTotal: money(),
    total: money().describe('subtotal + shippingCost + taxTotal'),
    notes: z.string().nullable(),
    createdById: z.string().nullable(),
    submittedAt: dateTime().nullable(),
    approvedAt: dateTime().nullable(),
    approvedById: z.string().nullable(),
    closedAt: dateTime().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'PurchaseOrderRow' });

export const PurchaseOrderDetail = PurchaseOrderRow.extend({ lines: z.array(PurchaseOrderLineRow) }).meta({
  id: 'PurchaseOrderDetail',
});

const currency = z.string().describe(PURCHASE_ORDER_CURRENCY_NOTE);

export const ListPurchaseOrdersResponse = z.object({
  ok: z.literal(true),
  currency,
  purchaseOrders: z.array(PurchaseOrderRow),
  nextCursor: z.string().nullable(),
});
export const PurchaseOrderDetailResponse = z.object({
  ok: z.literal(true),
  currency,
  purchaseOrder: PurchaseOrderDetail,
});
export const CreatePurchaseOrderResponse = z.object({
  ok: z.literal(true),
  purchaseOrderId: z.string(),
  number: z.number().int(),
  status: z.literal('DRAFT'),
});
export const PurchaseOrderIdResponse = z.object({ ok: z.literal(true), purchaseOrderId: z.string() });
export const PurchaseOrderStatusResponse = z.object({
  ok: z.literal(true),
  purchaseOrderId: z.string(),
  number: z.number().int(),
  status: z.enum(PURCHASE_ORDER_STATUSES),
});

export const ReceiptLineRow = z
  .object({
    lineId: z.string(),
    partId: z.string(),
    quantity: z.number(),
    unitCost: cost(),
    totalCost: money(),
    ledgerEntryId: z
      .string()
      .nullable()
      .describe('The receipt entry in the inventory ledger; null for a part with trackInventory false'),
  })
  .meta({ id: 'PurchaseOrderReceiptLine' });
export const ReceiptResponse = z.object({
  ok: z.literal(true),
  currency,
  receiptId: z.string(),
  purchaseOrderId: z.string(),
  number: z.number().int(),
  status: z.enum(PURCHASE_ORDER_STATUSES).describe('PARTIALLY_RECEIVED or RECEIVED'),
  yardId: z.string(),
  receivedAt: dateTime(),
  lines: z.array(ReceiptLineRow),
});

export function toPurchaseOrderRow(po: PurchaseOrder): z.input<typeof PurchaseOrderRow> {
  const subtotal = dec(po.subtotal);
  const shipping = dec(po.shippingCost);
  const tax = dec(po.taxTotal);
  return {
    id: po.id,
    number: po.number,
    status: po.status,
    vendorId: po.vendorId,
    yardId: po.yardId,
    subtotal: toWire(subtotal),
    shippingCost: toWire(shipping),
    taxTotal: toWire(tax),
    total: toWire(subtotal.plus(shipping).plus(tax)),
    notes: po.notes,
    createdById: po.createdById,
    submittedAt: iso(po.submittedAt),
    approvedAt: iso(po.approvedAt),
    approvedById: po.approvedById,
    closedAt: iso(po.closedAt),
    createdAt: po.createdAt.toISOString(),
    updatedAt: po.updatedAt.toISOString(),
  };
}

export function toPurchaseOrderLineRow(l: PurchaseOrderLine): z.input<typeof PurchaseOrderLineRow> {
  const q = dec(l.quantity);
  const c = dec(l.unitCost);
  return {
    id: l.id,
    partId: l.partId,
    quantity: toWire(q, 4),
    unitCost: toWire(c, 4),
    total: toWire(lineTotal(q, c)),
    received: toWire(dec(l.received), 4),
  };
}
