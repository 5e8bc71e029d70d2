import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeYard } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import {
  approvedOrder,
  ledgerOf,
  makeOrderPart,
  makePurchaseOrder,
  makeVendor,
  movePurchaseOrder,
  orderDetail,
  stockOf,
} from '../../helpers/app/purchasing.ts';

let t: TestApp;
let acme: TestTenant;
let vendorId: string;
let yardId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  vendorId = await makeVendor(t, acme.key);
  yardId = await makeYard(t, acme.key);
});
afterAll(() => t.close());

const receive = (id: string, body: unknown, headers?: Record<string, string>) =>
  t.api.post(`/api/v1/purchase-orders/${id}/receipts`, acme.key, body, headers);
const stockAt = (partId: string) => stockOf(t, acme.orgId, partId, yardId);
const ledger = async (partId: string) =>
  (await ledgerOf(t, acme.orgId, partId)).map((e) => ({
    id: e.id,
    type: e.type,
    yardId: e.yardId,
    quantity: Number(e.quantity),
    unitCost: Number(e.unitCost),
    totalCost: Number(e.totalCost),
    source: { type: e.sourceType, id: e.sourceId },
    createdAt: e.createdAt,
  }));
const receivedEvents = async (id: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'purchase_order.received' } }))
    .map((e) => e.data as Record<string, any>)
    .filter((d) => d.purchaseOrderId === id);

/** An approved order of two parts: 10 of the first at 5.00, 4 of the second at 7.25. */
async function twoLineOrder() {
  const filter = await makeOrderPart(t, acme.orgId);
  const hose = await makeOrderPart(t, acme.orgId);
  const id = await approvedOrder(t, acme.key, {
    vendorId,
    yardId,
    lines: [
      { partId: filter, quantity: 10, unitCost: 5 },
      { partId: hose, quantity: 4, unitCost: 7.25 },
    ],
  });
  const lines = (await orderDetail(t, acme.key, id)).purchaseOrder.lines as { id: string }[];
  return { id, filter, hose, filterLine: lines[0].id, hoseLine: lines[1].id };
}

describe('POST /purchase-orders/:id/receipts', () => {
  it('receives partially then fully: stock, ledger entries, received quantities, status and events', async () => {
    const o = await twoLineOrder();
    const first = await receive(o.id, { lines: [{ lineId: o.filterLine, quantity: 6 }] });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({
      ok: true,
      currency: 'USD',
      purchaseOrderId: o.id,
      status: 'PARTIALLY_RECEIVED',
      yardId,
      lines: [{ lineId: o.filterLine, partId: o.filter, quantity: 6, unitCost: 5, totalCost: 30 }],
    });
    expect(await stockAt(o.filter)).toMatchObject({ onHand: 6, value: 30 });

    const second = await receive(o.id, {
      lines: [
        { lineId: o.filterLine, quantity: 4, unitCost: 5.5 },
        { lineId: o.hoseLine, quantity: 4 },
      ],
      receivedAt: '2026-11-20T08:00:00Z',
    });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().status).toBe('RECEIVED');
    expect(await stockAt(o.filter)).toMatchObject({ onHand: 10, value: 52 });
    expect(await stockAt(o.hose)).toMatchObject({ onHand: 4, value: 29 });

    const entries = await ledger(o.filter);
    expect(entries).toHaveLength(2);
    for (const e of entries)
      expect(e).toMatchObject({ type: 'receipt', yardId, source: { type: 'purchase_order', id: o.id } });
    expect(entries.map((e: { quantity: number; unitCost: number }) => [e.quantity, e.unitCost]).sort()).toEqual([
      [4, 5.5],
      [6, 5],
    ]);
    expect(entries.map((e: { id: string }) => e.id).sort()).toEqual(
      [first.json().lines[0].ledgerEntryId, second.json().lines[0].ledgerEntryId].sort(),
    );

    const { purchaseOrder } = await orderDetail(t, acme.key, o.id);
    expect(purchaseOrder.status).toBe('RECEIVED');
    expect(purchaseOrder.lines.map((l: { received: number }) => l.received)).toEqual([10, 4]);
    const events = await receivedEvents(o.id);
    expect(events.map((e) => e.status).sort()).toEqual(['PARTIALLY_RECEIVED', 'RECEIVED']);
    expect(events.find((e) => e.status === 'RECEIVED')!.lines).toHaveLength(2);

    // RECEIVED takes no more receipts; it can be closed, and CLOSED is final.
    const late = await receive(o.id, { lines: [{ lineId: o.hoseLine, quantity: 1 }] });
    expect(late.statusCode).toBe(409);
    expect((await movePurchaseOrder(t, acme.key, o.id, 'close')).status).toBe('CLOSED');
    expect((await t.api.post(`/api/v1/purchase-orders/${o.id}/close`, acme.key)).statusCode).toBe(409);
  });

  it('refuses more than ordered with 422 and changes nothing', async () => {
    const o = await twoLineOrder();
    await receive(o.id, { lines: [{ lineId: o.filterLine, quantity: 8 }] });
    const over = await receive(o.id, {
      lines: [
        { lineId: o.hoseLine, quantity: 1 },
        { lineId: o.filterLine, quantity: 2.5 },
      ],
    });
    expect(over.statusCode).toBe(422);
    expect(over.json().fieldErrors).toEqual({ 'lines.1.quantity': expect.stringMatching(/still to receive/) });
    expect(await stockAt(o.filter)).toMatchObject({ onHand: 8 });
    expect(await stockAt(o.hose)).toMatchObject({ onHand: 0 });
    expect((await orderDetail(t, acme.key, o.id)).purchaseOrder.status).toBe('PARTIALLY_RECEIVED');
  });

  it('answers 409 for an order not APPROVED or PARTIALLY_RECEIVED, 422 for a line of another order', async () => {
    const part = await makeOrderPart(t, acme.orgId);
    const { purchaseOrderId: draft } = await makePurchaseOrder(t, acme.key, {
      vendorId,
      yardId,
      lines: [{ partId: part, quantity: 1, unitCost: 1 }],
    });
    const line = (await orderDetail(t, acme.key, draft)).purchaseOrder.lines[0].id;
    for (const step of ['', 'submit']) {
      if (step) await movePurchaseOrder(t, acme.key, draft, step);
      const res = await receive(draft, { lines: [{ lineId: line, quantity: 1 }] });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('invalid_status_transition');
    }
    const o = await twoLineOrder();
    const foreign = await receive(o.id, { lines: [{ lineId: line, quantity: 1 }] });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.json().fieldErrors).toHaveProperty('lines.0.lineId');
    const future = await receive(o.id, {
      lines: [{ lineId: o.hoseLine, quantity: 1 }],
      receivedAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(future.statusCode).toBe(422);
    expect(future.json().fieldErrors).toHaveProperty('receivedAt');
  });

  it('replays a retry with the same Idempotency-Key: one receipt, one ledger entry', async () => {
    const o = await twoLineOrder();
    const body = { lines: [{ lineId: o.filterLine, quantity: 3 }] };
    const headers = { 'Idempotency-Key': `receipt-${o.id}` };
    const first = await receive(o.id, body, headers);
    const retry = await receive(o.id, body, headers);
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    expect(retry.body).toBe(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await ledger(o.filter)).toHaveLength(1);
    expect(await stockAt(o.filter)).toMatchObject({ onHand: 3 });
    expect(await receivedEvents(o.id)).toHaveLength(1);
    const other = await receive(o.id, { lines: [{ lineId: o.filterLine, quantity: 4 }] }, headers);
    expect(other.statusCode).toBe(422);
    expect(other.json().error).toBe('idempotency_key_reused');
  });

  it('never over-receives under concurrent receipts of the same order', async () => {
    const o = await twoLineOrder();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => receive(o.id, { lines: [{ lineId: o.filterLine, quantity: 3 }] })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 201, 201, 422, 422]);
    expect(await stockAt(o.filter)).toMatchObject({ onHand: 9, value: 45 });
    expect((await orderDetail(t, acme.key, o.id)).purchaseOrder.lines[0].received).toBe(9);
  });

  it('receives a part that tracks no inventory on the order without moving stock', async () => {
    const untracked = await makeOrderPart(t, acme.orgId, { trackInventory: false });
    const id = await approvedOrder(t, acme.key, {
      vendorId,
      yardId,
      lines: [{ partId: untracked, quantity: 2, unitCost: 3.5 }],
    });
    const lineId = (await orderDetail(t, acme.key, id)).purchaseOrder.lines[0].id;
    const res = await receive(id, { lines: [{ lineId, quantity: 2 }] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'RECEIVED', lines: [{ totalCost: 7, ledgerEntryId: null }] });
    expect(await ledger(untracked)).toEqual([]);
    expect(await stockAt(untracked)).toEqual({ onHand: 0, value: 0 });
  });

  it('refuses a receipt into a yard deleted since approval with 422 on yardId', async () => {
    const spare = await makeYard(t, acme.key, { name: 'Spare yard' });
    const part = await makeOrderPart(t, acme.orgId);
    const id = await approvedOrder(t, acme.key, {
      vendorId,
      yardId: spare,
      lines: [{ partId: part, quantity: 1, unitCost: 1 }],
    });
    const lineId = (await orderDetail(t, acme.key, id)).purchaseOrder.lines[0].id;
    expect((await t.api.delete(`/api/v1/yards/${spare}`, acme.key)).statusCode).toBe(200);
    const res = await receive(id, { lines: [{ lineId, quantity: 1 }] });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('yardId');
  });
});
