import type { Prisma, PurchaseOrder } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, newestFirstKey, paginate, timeIdCursor } from '../../core/pagination.ts';
import { dec, toSql, toWire } from '../../core/money.ts';
import { emit } from '../../events/outbox.ts';
import { assertReferences } from '../shared/references.ts';
import { assertVendorReference, ownedVendor } from '../vendors/vendors.repository.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import {
  assertLineParts,
  insertPurchaseOrder,
  listPurchaseOrders,
  lockOwnedPurchaseOrder,
  orderLines,
  replaceLines,
} from './purchase-orders.repository.ts';
import {
  assertEditable,
  nextStatus,
  orderSubtotal,
  submitProblems,
  type PurchaseOrderAction,
} from './purchase-orders.rules.ts';
import {
  toPurchaseOrderLineRow,
  toPurchaseOrderRow,
  UPDATABLE_PURCHASE_ORDER_FIELDS,
  type CreatePurchaseOrderInput,
  type ListPurchaseOrdersInput,
  type UpdatePurchaseOrderInput,
} from './purchase-orders.schemas.ts';
import { receivePurchaseOrder } from './purchase-order-receipts.operations.ts';
import type { ReceiptInput } from './purchase-orders.schemas.ts';

const orderTotal = (po: PurchaseOrder) => toWire(dec(po.subtotal).plus(dec(po.shippingCost)).plus(dec(po.taxTotal)));

/** The vendor, yard and parts an order's fields name: all of the organisation, the vendor and parts in use. */
async function checkReferences(tx: Tx, ctx: RequestContext, input: UpdatePurchaseOrderInput) {
  await assertVendorReference(tx, ctx.orgId, input.vendorId);
  await assertReferences(tx, ctx.orgId, [{ field: 'yardId', kind: 'yard', id: input.yardId }]);
  if (input.lines) await assertLineParts(tx, ctx.orgId, input.lines);
}

export function createPurchaseOrderService({ db }: Pick<ServiceDeps, 'db'>) {
  /** A status move by one of the action endpoints, with its event for submit and approve. */
  async function move(ctx: RequestContext, id: string, action: PurchaseOrderAction) {
    return transaction(db, async (tx) => {
      const po = await lockOwnedPurchaseOrder(tx, ctx.orgId, id);
      const status = nextStatus(po.status, action);
      const now = new Date();
      const data: Prisma.PurchaseOrderUncheckedUpdateInput = { status };
      if (action === 'submit') {
        const [vendor, lineCount] = await Promise.all([
          po.vendorId ? ownedVendor(tx, ctx.orgId, po.vendorId) : null,
          tx.purchaseOrderLine.count({ where: { orgId: ctx.orgId, purchaseOrderId: id } }),
        ]);
        const problems = submitProblems({
          vendorId: po.vendorId,
          vendorArchived: vendor?.archivedAt != null,
          yardId: po.yardId,
          lineCount,
        });
        if (Object.keys(problems).length > 0)
          throw new ValidationError(problems, 'The purchase order is not complete enough to submit');
        data.submittedAt = now;
      }
      if (action === 'approve') Object.assign(data, { approvedAt: now, approvedById: ctx.actorId });
      if (action === 'close') data.closedAt = now;
      const after = await tx.purchaseOrder.update({ where: { id }, data });
      if (action === 'submit' || action === 'approve') {
        const common = {
          purchaseOrderId: id,
          number: after.number,
          status: after.status,
          vendorId: after.vendorId,
          yardId: after.yardId,
          total: orderTotal(after),
          currency: await orgCurrency(tx, ctx.orgId),
          actorId: ctx.actorId,
        };
        if (action === 'submit')
          await emit(tx, ctx.orgId, 'purchase_order.submitted', { ...common, submittedAt: now.toISOString() });
        else await emit(tx, ctx.orgId, 'purchase_order.approved', { ...common, approvedAt: now.toISOString() });
      }
      return { ok: true as const, purchaseOrderId: id, number: after.number, status: after.status };
    });
  }

  return {
    async list(ctx: RequestContext, query: ListPurchaseOrdersInput) {
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const [rows, currency] = await Promise.all([
        listPurchaseOrders(db.sql, ctx.orgId, query, after),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, currency, purchaseOrders: page.map(toPurchaseOrderRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreatePurchaseOrderInput) {
      return transaction(db, async (tx) => {
        await checkReferences(tx, ctx, input);
        const po = await insertPurchaseOrder(tx, ctx.orgId, {
          vendorId: input.vendorId ?? null,
          yardId: input.yardId ?? null,
          shippingCost: input.shippingCost ?? 0,
          taxTotal: input.taxTotal ?? 0,
          notes: input.notes ?? null,
          createdById: ctx.actorId,
          subtotal: orderSubtotal(
            (input.lines ?? []).map((l) => ({ quantity: dec(l.quantity), unitCost: dec(l.unitCost) })),
          ),
        });
        if (input.lines && input.lines.length > 0) await replaceLines(tx, ctx.orgId, po.id, input.lines);
        return { ok: true as const, purchaseOrderId: po.id, number: po.number, status: 'DRAFT' as const };
      });
    },

    async get(ctx: RequestContext, id: string) {
      const po = await db.prisma.purchaseOrder.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!po) throw notFound('Purchase order');
      const [lines, currency] = await Promise.all([
        orderLines(db.prisma, ctx.orgId, id),
        orgCurrency(db.prisma, ctx.orgId),
      ]);
      return {
        ok: true as const,
        currency,
        purchaseOrder: { ...toPurchaseOrderRow(po), lines: lines.map(toPurchaseOrderLineRow) },
      };
    },

    /** Only in DRAFT (409 invalid_status_transition otherwise); `lines` replaces the whole list. */
    async update(ctx: RequestContext, id: string, patch: UpdatePurchaseOrderInput) {
      if (!UPDATABLE_PURCHASE_ORDER_FIELDS.some((f) => patch[f] !== undefined))
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_PURCHASE_ORDER_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      return transaction(db, async (tx) => {
        const po = await lockOwnedPurchaseOrder(tx, ctx.orgId, id);
        assertEditable(po.status);
        await checkReferences(tx, ctx, patch);
        const data: Prisma.PurchaseOrderUncheckedUpdateInput = {};
        if (patch.vendorId !== undefined) data.vendorId = patch.vendorId;
        if (patch.yardId !== undefined) data.yardId = patch.yardId;
        if (patch.notes !== undefined) data.notes = patch.notes;
        if (patch.shippingCost !== undefined) data.shippingCost = toSql(dec(patch.shippingCost));
        if (patch.taxTotal !== undefined) data.taxTotal = toSql(dec(patch.taxTotal));
        if (patch.lines !== undefined) data.subtotal = toSql(await replaceLines(tx, ctx.orgId, id, patch.lines));
        await tx.purchaseOrder.update({ where: { id }, data });
        return { ok: true as const, purchaseOrderId: id };
      });
    },

    submit: (ctx: RequestContext, id: string) => move(ctx, id, 'submit'),
    approve: (ctx: RequestContext, id: string) => move(ctx, id, 'approve'),
    reject: (ctx: RequestContext, id: string) => move(ctx, id, 'reject'),
    cancel: (ctx: RequestContext, id: string) => move(ctx, id, 'cancel'),
    close: (ctx: RequestContext, id: string) => move(ctx, id, 'close'),

    receive(ctx: RequestContext, id: string, input: ReceiptInput) {
      return transaction(db, (tx) => receivePurchaseOrder(tx, ctx, id, input));
    },
  };
}

export type PurchaseOrderService = ReturnType<typeof createPurchaseOrderService>;
