import { describe, expect, it } from 'vitest';
import type { PurchaseOrderStatus } from '../../../src/generated/prisma/client.ts';
import { ApiError, ValidationError } from '../../../src/core/errors.ts';
import { dec } from '../../../src/core/money.ts';
import {
  assertEditable,
  assertReceivable,
  lineTotal,
  nextStatus,
  orderSubtotal,
  planReceipt,
  PURCHASE_ORDER_ACTIONS,
  statusAfterReceipt,
  submitProblems,
  type PurchaseOrderAction,
} from '../../../src/modules/purchase-orders/purchase-orders.rules.ts';
import { PURCHASE_ORDER_STATUSES } from '../../../src/modules/purchase-orders/purchase-orders.schemas.ts';

/** Every allowed (status, action) pair and where it leads; every other pair must be refused. */
const ALLOWED: Record<string, PurchaseOrderStatus> = {
  'DRAFT submit': 'SUBMITTED',
  'SUBMITTED approve': 'APPROVED',
  'SUBMITTED reject': 'REJECTED',
  'DRAFT cancel': 'CANCELLED',
  'SUBMITTED cancel': 'CANCELLED',
  'APPROVED cancel': 'CANCELLED',
  'RECEIVED close': 'CLOSED',
};

const pairs = PURCHASE_ORDER_STATUSES.flatMap((s) =>
  PURCHASE_ORDER_ACTIONS.map((a) => [s, a] as [PurchaseOrderStatus, PurchaseOrderAction]),
);

describe('nextStatus', () => {
  it.each(pairs.filter(([s, a]) => ALLOWED[`${s} ${a}`]))('%s + %s is allowed', (status, action) => {
    expect(nextStatus(status, action)).toBe(ALLOWED[`${status} ${action}`]);
  });

  it.each(pairs.filter(([s, a]) => !ALLOWED[`${s} ${a}`]))(
    '%s + %s is 409 invalid_status_transition',
    (status, action) => {
      let err: unknown;
      try {
        nextStatus(status, action);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ statusCode: 409, code: 'invalid_status_transition' });
    },
  );

  it('covers 8 statuses x 5 actions, 7 of them allowed', () => {
    expect(pairs).toHaveLength(40);
    expect(pairs.filter(([s, a]) => ALLOWED[`${s} ${a}`])).toHaveLength(7);
  });
});

describe('assertEditable and assertReceivable', () => {
  it.each(PURCHASE_ORDER_STATUSES)('%s', (status) => {
    const editable = () => assertEditable(status);
    const receivable = () => assertReceivable(status);
    if (status === 'DRAFT') expect(editable).not.toThrow();
    else expect(editable).toThrow(/only a DRAFT order/);
    if (status === 'APPROVED' || status === 'PARTIALLY_RECEIVED') expect(receivable).not.toThrow();
    else expect(receivable).toThrow(/receipts need it APPROVED or PARTIALLY_RECEIVED/);
  });
});

describe('submitProblems', () => {
  it('names every missing piece', () => {
    expect(submitProblems({ vendorId: null, vendorArchived: false, yardId: null, lineCount: 0 })).toEqual({
      vendorId: expect.any(String),
      yardId: expect.any(String),
      lines: expect.any(String),
    });
    expect(submitProblems({ vendorId: 'v', vendorArchived: true, yardId: 'y', lineCount: 1 })).toEqual({
      vendorId: 'this vendor is archived',
    });
    expect(submitProblems({ vendorId: 'v', vendorArchived: false, yardId: 'y', lineCount: 1 })).toEqual({});
  });
});

describe('totals', () => {
  it('rounds each line half-up to the cent and adds exactly', () => {
    expect(lineTotal(dec(3), dec('0.3335')).toFixed()).toBe('1');
    expect(lineTotal(dec('2.5'), dec('84.40')).toFixed(2)).toBe('211.00');
    const subtotal = orderSubtotal([
      { quantity: dec(1), unitCost: dec('0.1') },
      { quantity: dec(1), unitCost: dec('0.2') },
    ]);
    expect(subtotal.toFixed(2)).toBe('0.30');
  });
});

describe('receipts', () => {
  const line = (id: string, quantity: string, received = '0') => ({
    id,
    partId: `part-${id}`,
    quantity: dec(quantity),
    unitCost: dec('5'),
    received: dec(received),
  });

  it('plans each line at its own cost unless one is given', () => {
    const planned = planReceipt(
      [line('a', '10'), line('b', '4', '1')],
      [
        { lineId: 'a', quantity: 4 },
        { lineId: 'b', quantity: 3, unitCost: 6.25 },
      ],
    );
    expect(planned.map((p) => [p.line.id, p.quantity.toFixed(), p.unitCost.toFixed()])).toEqual([
      ['a', '4', '5'],
      ['b', '3', '6.25'],
    ]);
  });

  it('refuses more than remains, a foreign line and a line named twice, all at once', () => {
    let err: ValidationError | undefined;
    try {
      planReceipt(
        [line('a', '10', '8'), line('b', '2')],
        [
          { lineId: 'a', quantity: 2.0001 },
          { lineId: 'x', quantity: 1 },
          { lineId: 'b', quantity: 1 },
          { lineId: 'b', quantity: 1 },
        ],
      );
    } catch (e) {
      err = e as ValidationError;
    }
    expect(err?.fieldErrors).toEqual({
      'lines.0.quantity': expect.stringMatching(/more than the 2 still to receive/),
      'lines.1.lineId': 'is not a line of this purchase order',
      'lines.3.lineId': expect.stringMatching(/already received earlier/),
    });
  });

  it('is RECEIVED once every line is in full, PARTIALLY_RECEIVED before', () => {
    expect(statusAfterReceipt([line('a', '10', '10'), line('b', '2', '1')])).toBe('PARTIALLY_RECEIVED');
    expect(statusAfterReceipt([line('a', '10', '10'), line('b', '2', '2')])).toBe('RECEIVED');
  });
});
