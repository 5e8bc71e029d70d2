import { randomUUID } from 'node:crypto';
import { Prisma, type PurchaseOrder, type PurchaseOrderLine } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { notFound, ValidationError, type FieldErrors } from '../../core/errors.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import { dec, toSql, type Dec } from '../../core/money.ts';
import { orderSubtotal } from './purchase-orders.rules.ts';
import { PURCHASE_ORDER_STATUSES, type ListPurchaseOrdersInput } from './purchase-orders.schemas.ts';

export interface NewLine {
  partId: string;
  quantity: number;
  unitCost: number;
}

/** Newest first; one range of purchase_orders(orgId, status, createdAt, id) per status, or the vendor's index. */
export function listPurchaseOrders(
  sql: SqlRunner,
  orgId: string,
  query: ListPurchaseOrdersInput,
  after: [Date, string] | null,
): Promise<PurchaseOrder[]> {
  const params: unknown[] = [orgId];
  const where = ['"orgId" = $1'];
  if (query.vendorId) where.push(`"vendorId" = $${params.push(query.vendorId)}`);
  const { text, params: bound } = keysetSql({
    from: 'purchase_orders',
    where,
    params,
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
    split: { column: 'status', values: query.status, all: PURCHASE_ORDER_STATUSES },
  });
  return sql.query<PurchaseOrder>(text, bound);
}

/** The order of the organisation with its row locked until the transaction ends: moves and receipts queue on it. */
export async function lockOwnedPurchaseOrder(tx: Tx, orgId: string, id: string): Promise<PurchaseOrder> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM purchase_orders WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  const po = locked.length === 0 ? null : await tx.purchaseOrder.findFirst({ where: { id, orgId } });
  if (!po) throw notFound('Purchase order');
  return po;
}

export function orderLines(tx: Tx, orgId: string, purchaseOrderId: string): Promise<PurchaseOrderLine[]> {
  return tx.purchaseOrderLine.findMany({ where: { orgId, purchaseOrderId }, orderBy: { position: 'asc' } });
}

/**
 * Every part the lines name exists in the organisation and is not archived; 422 on `lines.<i>.partId` otherwise.
 * One query for the whole list.
 */
export async function assertLineParts(tx: Tx, orgId: string, lines: NewLine[]): Promise<void> {
  if (lines.length === 0) return;
  const ids = [...new Set(lines.map((l) => l.partId))];
  const rows = await tx.$queryRaw<{ id: string; archivedAt: Date | null }[]>`
    SELECT id, "archivedAt" FROM parts WHERE "orgId" = ${orgId} AND id IN (${Prisma.join(ids)})`;
  const found = new Map(rows.map((r) => [r.id, r]));
  const errors: FieldErrors = {};
  lines.forEach((l, i) => {
    const part = found.get(l.partId);
    if (!part) errors[`lines.${i}.partId`] = 'no part with this id in your organisation';
    else if (part.archivedAt) errors[`lines.${i}.partId`] = 'this part is archived';
  });
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

/** Replaces the order's lines with `lines` (in their order) and returns the new subtotal. */
export async function replaceLines(tx: Tx, orgId: string, purchaseOrderId: string, lines: NewLine[]) {
  await tx.purchaseOrderLine.deleteMany({ where: { orgId, purchaseOrderId } });
  if (lines.length > 0)
    await tx.purchaseOrderLine.createMany({
      data: lines.map((l, position) => ({
        id: randomUUID(),
        orgId,
        purchaseOrderId,
        position,
        partId: l.partId,
        quantity: toSql(dec(l.quantity)),
        unitCost: toSql(dec(l.unitCost)),
      })),
    });
  return orderSubtotal(lines.map((l) => ({ quantity: dec(l.quantity), unitCost: dec(l.unitCost) })));
}

/**
 * Numbers and inserts a DRAFT order in one statement. The organisation row's lock (the UPDATE of
 * "purchaseOrderSeq") makes numbers unique and gap-free: a rolled-back create rolls its number back too. Callers
 * call it after their checks, so the lock is held only from here to the commit.
 */
export async function insertPurchaseOrder(
  tx: Tx,
  orgId: string,
  input: {
    vendorId: string | null;
    yardId: string | null;
    shippingCost: number;
    taxTotal: number;
    notes: string | null;
    createdById: string | null;
    subtotal: Dec;
  },
): Promise<PurchaseOrder> {
  const rows = await tx.$queryRaw<PurchaseOrder[]>`
    WITH seq AS (
      UPDATE organizations SET "purchaseOrderSeq" = "purchaseOrderSeq" + 1 WHERE id = ${orgId}
      RETURNING "purchaseOrderSeq" AS n
    )
    INSERT INTO purchase_orders (id, "orgId", number, "vendorId", "yardId", subtotal, "shippingCost", "taxTotal",
      notes, "createdById")
    SELECT ${randomUUID()}, ${orgId}, seq.n, ${input.vendorId}, ${input.yardId}, ${toSql(input.subtotal)}::numeric,
      ${toSql(dec(input.shippingCost))}::numeric, ${toSql(dec(input.taxTotal))}::numeric, ${input.notes},
      ${input.createdById}
    FROM seq
    RETURNING *`;
  if (rows.length !== 1) throw new Error(`organisation ${orgId} not found while numbering a purchase order`);
  return rows[0];
}
