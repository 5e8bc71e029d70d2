// Purchasing test data, made through the API: vendors, parts to order, and purchase orders taken to a status.
import { expect } from 'vitest';
import { expectCreated } from './factories.ts';
import type { TestApp } from './test-app.ts';

type Body = Record<string, unknown>;
let serial = 0;

export async function makeVendor(t: TestApp, key: string, overrides: Body = {}): Promise<string> {
  const body = { name: `Vendor ${++serial}-${Math.random().toString(36).slice(2, 8)}`, ...overrides };
  return expectCreated<{ vendorId: string }>(await t.api.post('/api/v1/vendors', key, body), 'POST /vendors').vendorId;
}

/**
 * A part of `orgId` with a unique number, written as a row: purchasing needs a part to order, not the parts API.
 * `archived` archives it; `trackInventory: false` makes a part that moves no stock.
 */
export async function makeOrderPart(
  t: TestApp,
  orgId: string,
  options: { archived?: boolean; trackInventory?: boolean } = {},
): Promise<string> {
  const part = await t.db.prisma.part.create({
    data: {
      orgId,
      number: `P-${++serial}-${Math.random().toString(36).slice(2, 8)}`,
      name: 'Oil filter',
      trackInventory: options.trackInventory ?? true,
      archivedAt: options.archived ? new Date() : null,
    },
  });
  return part.id;
}

/** The stock of a part in a yard, as numbers (0 when the yard never held it). */
export async function stockOf(t: TestApp, orgId: string, partId: string, yardId: string) {
  const row = await t.db.prisma.partStock.findFirst({ where: { orgId, partId, yardId } });
  return { onHand: Number(row?.onHand ?? 0), value: Number(row?.value ?? 0) };
}

/** The ledger entries of a part, oldest first. */
export function ledgerOf(t: TestApp, orgId: string, partId: string) {
  return t.db.prisma.inventoryLedgerEntry.findMany({ where: { orgId, partId }, orderBy: { createdAt: 'asc' } });
}

export interface OrderSetup {
  vendorId: string;
  yardId: string;
  lines: { partId: string; quantity: number; unitCost: number }[];
}

/** A DRAFT order with the given fields; returns its id and number. */
export async function makePurchaseOrder(t: TestApp, key: string, body: Body) {
  return expectCreated<{ purchaseOrderId: string; number: number }>(
    await t.api.post('/api/v1/purchase-orders', key, body),
    'POST /purchase-orders',
  );
}

/** POST /purchase-orders/:id/<action>, expecting 200. */
export async function movePurchaseOrder(t: TestApp, key: string, id: string, action: string) {
  const res = await t.api.post(`/api/v1/purchase-orders/${id}/${action}`, key);
  expect(res.statusCode, `${action}: ${res.body}`).toBe(200);
  return res.json();
}

/** An order taken to APPROVED. */
export async function approvedOrder(t: TestApp, key: string, setup: OrderSetup & Body): Promise<string> {
  const { purchaseOrderId } = await makePurchaseOrder(t, key, setup);
  await movePurchaseOrder(t, key, purchaseOrderId, 'submit');
  await movePurchaseOrder(t, key, purchaseOrderId, 'approve');
  return purchaseOrderId;
}

export async function orderDetail(t: TestApp, key: string, id: string) {
  const res = await t.api.get(`/api/v1/purchase-orders/${id}`, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
