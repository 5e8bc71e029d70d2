import { z } from 'zod';

/** Purchasing: an order submitted for approval, approved, and each receipt of goods against it. */
const id = z.string();
const nullableId = z.string().nullable();
const at = z.iso.datetime({ offset: true });
const status = z.enum([
  'DRAFT',
  'SUBMITTED',
  'APPROVED',
  'REJECTED',
  'PARTIALLY_RECEIVED',
  'RECEIVED',
  'CLOSED',
  'CANCELLED',
]);
const order = {
  purchaseOrderId: id,
  number: z.number().int(),
  status,
  vendorId: nullableId,
  yardId: nullableId,
  total: z.number().describe("subtotal + shipping + tax, in the organisation's currency"),
  currency: z.string(),
  actorId: nullableId,
};

export const purchasingEvents = {
  'purchase_order.submitted': {
    summary: 'A purchase order is submitted for approval (DRAFT to SUBMITTED).',
    data: z.object({ ...order, submittedAt: at }),
  },
  'purchase_order.approved': {
    summary: 'A submitted purchase order is approved; goods can now be received against it.',
    data: z.object({ ...order, approvedAt: at }),
  },
  'purchase_order.received': {
    summary:
      'Goods are received against a purchase order, once per receipt; status says whether it is now ' +
      'PARTIALLY_RECEIVED or RECEIVED, lines what this receipt brought.',
    data: z.object({
      purchaseOrderId: id,
      number: z.number().int(),
      status,
      yardId: id,
      receiptId: id,
      lines: z.array(
        z.object({
          lineId: id,
          partId: id,
          quantity: z.number(),
          unitCost: z.number(),
          totalCost: z.number(),
          ledgerEntryId: nullableId,
        }),
      ),
      currency: z.string(),
      receivedAt: at,
      actorId: nullableId,
    }),
  },
} as const;

const AT = '2026-11-29T09:30:00.000Z';
const ORDER = {
  purchaseOrderId: 'po_01',
  number: 42,
  vendorId: 'ven_01',
  yardId: 'yard_01',
  total: 118.5,
  currency: 'USD',
  actorId: 'usr_7f3c2a',
};

export const PURCHASING_EVENT_EXAMPLES: {
  [T in keyof typeof purchasingEvents]: z.input<(typeof purchasingEvents)[T]['data']>;
} = {
  'purchase_order.submitted': { ...ORDER, status: 'SUBMITTED', submittedAt: AT },
  'purchase_order.approved': { ...ORDER, status: 'APPROVED', approvedAt: AT },
  'purchase_order.received': {
    purchaseOrderId: 'po_01',
    number: 42,
    status: 'PARTIALLY_RECEIVED',
    yardId: 'yard_01',
    receiptId: 'rcpt_01',
    lines: [{ lineId: 'pol_01', partId: 'part_01', quantity: 10, unitCost: 5, totalCost: 50, ledgerEntryId: 'led_01' }],
    currency: 'USD',
    receivedAt: AT,
    actorId: 'usr_7f3c2a',
  },
};
