import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { dec, round } from '../../core/money.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { assertReferences } from '../shared/references.ts';
import { orgCurrency } from '../organization/organization.repository.ts';
import { sharePart } from '../parts/parts.repository.ts';
import { addStock, takeStock } from '../parts/part-ledger.operations.ts';
import { openWorkOrder } from './work-order-lines.repository.ts';
import {
  laborLineWire,
  partLineWire,
  type AddLaborLineInput,
  type AddPartLineInput,
} from './work-order-lines.schemas.ts';

export function createWorkOrderLineService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /**
     * Issues stock by the cost method and freezes its cost on the line; a part that keeps no stock is costed at
     * its unitCost with no ledger entry.
     */
    async addPart(ctx: RequestContext, workOrderId: string, input: AddPartLineInput) {
      return transaction(db, async (tx) => {
        await openWorkOrder(tx, ctx.orgId, workOrderId);
        const part = await sharePart(tx, ctx.orgId, input.partId);
        if (!part) throw new ValidationError({ partId: 'is not a part of this organisation' });
        const quantity = dec(input.quantity);
        let unitCost = dec(part.unitCost ?? 0);
        let totalCost = round(quantity.times(unitCost), 2);
        let yardId: string | null = null;
        if (part.trackInventory) {
          if (!input.yardId) throw new ValidationError({ yardId: 'is required for a part that tracks inventory' });
          await assertReferences(tx, ctx.orgId, [{ field: 'yardId', kind: 'yard', id: input.yardId }]);
          yardId = input.yardId;
          const { entry } = await takeStock(tx, {
            orgId: ctx.orgId,
            partId: input.partId,
            yardId,
            type: 'issue',
            quantity,
            source: { type: 'work_order', id: workOrderId },
            actor: ctx.actorId,
          });
          unitCost = entry.unitCost;
          totalCost = entry.totalCost;
        }
        const line = await tx.workOrderPartLine.create({
          data: {
            orgId: ctx.orgId,
            workOrderId,
            partId: input.partId,
            yardId,
            quantity: quantity.toFixed(),
            unitCost: round(unitCost, 4).toFixed(),
            totalCost: totalCost.toFixed(),
            tracked: part.trackInventory,
            createdById: ctx.actorId,
          },
        });
        return {
          ok: true as const,
          currency: await orgCurrency(tx, ctx.orgId),
          lineId: line.id,
          line: partLineWire(line),
        };
      });
    },

    /** The quantity goes back to its yard at the line's own cost (a `return` entry and a layer at that cost). */
    async removePart(ctx: RequestContext, workOrderId: string, lineId: string) {
      return transaction(db, async (tx) => {
        await openWorkOrder(tx, ctx.orgId, workOrderId);
        const locked = await tx.$queryRaw<{ id: string }[]>`
          SELECT "id" FROM "work_order_part_lines"
          WHERE "id" = ${lineId} AND "workOrderId" = ${workOrderId} AND "orgId" = ${ctx.orgId} FOR UPDATE`;
        if (!locked[0]) throw notFound('Part line');
        const line = await tx.workOrderPartLine.findUniqueOrThrow({ where: { id: lineId } });
        // A yard deleted since held no stock of it then; the line goes and nothing is returned.
        if (line.tracked && line.yardId) {
          const quantity = dec(line.quantity);
          await addStock(tx, {
            orgId: ctx.orgId,
            partId: line.partId,
            yardId: line.yardId,
            type: 'return',
            source: { type: 'work_order', id: workOrderId },
            actor: ctx.actorId,
            unitCost: dec(line.unitCost),
            pieces: [{ quantity, unitCost: dec(line.unitCost), value: dec(line.totalCost) }],
          });
        }
        await tx.workOrderPartLine.delete({ where: { id: lineId } });
        return { ok: true as const, lineId };
      });
    },

    async addLabor(ctx: RequestContext, workOrderId: string, input: AddLaborLineInput) {
      return transaction(db, async (tx) => {
        await openWorkOrder(tx, ctx.orgId, workOrderId);
        await assertReferences(tx, ctx.orgId, [{ field: 'technicianId', kind: 'user', id: input.technicianId }]);
        const hours = dec(input.hours);
        const rate = dec(input.rate);
        const line = await tx.workOrderLaborLine.create({
          data: {
            orgId: ctx.orgId,
            workOrderId,
            hours: hours.toFixed(),
            rate: rate.toFixed(),
            totalCost: round(hours.times(rate), 2).toFixed(),
            technicianId: input.technicianId ?? null,
            description: input.description ?? null,
            createdById: ctx.actorId,
          },
        });
        return {
          ok: true as const,
          currency: await orgCurrency(tx, ctx.orgId),
          lineId: line.id,
          line: laborLineWire(line),
        };
      });
    },

    async removeLabor(ctx: RequestContext, workOrderId: string, lineId: string) {
      return transaction(db, async (tx) => {
        await openWorkOrder(tx, ctx.orgId, workOrderId);
        const deleted = await tx.workOrderLaborLine.deleteMany({
          where: { id: lineId, workOrderId, orgId: ctx.orgId },
        });
        if (deleted.count === 0) throw notFound('Labor line');
        return { ok: true as const, lineId };
      });
    },
  };
}

export type WorkOrderLineService = ReturnType<typeof createWorkOrderLineService>;
