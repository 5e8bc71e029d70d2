import type { WorkOrder } from '../../generated/prisma/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, newestFirstKey, paginate, timeIdCursor } from '../../core/pagination.ts';
import { assertReferences } from '../shared/references.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { completeWorkOrder, resolveLinkedFlag } from '../work-orders/work-order-completion.operations.ts';
import { lockWorkOrder } from '../work-orders/work-orders.repository.ts';
import { checkRepairCost } from './repair-anomaly.job.ts';
import { listRepairs } from './repairs.repository.ts';
import { toRepairDetail, toRepairRow, type CreateRepairInput, type ListRepairsFilter } from './repairs.schemas.ts';

export function createRepairService({ db, background }: Pick<ServiceDeps, 'db' | 'background'>) {
  return {
    async list(ctx: RequestContext, query: ListRepairsFilter) {
      const rows = await listRepairs(db.sql, ctx.orgId, query, timeIdCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, repairs: page.map(toRepairRow), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      const repair = await db.prisma.repair.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!repair) throw notFound('Repair');
      return { ok: true as const, repair: toRepairDetail(repair) };
    },

    /**
     * Logs a repair. With a work order: the order's row is locked, the repair takes its asset (when
     * omitted) and project, and the order becomes DONE (workorder.completed once, linked flag resolved),
     * all in one transaction. The cost-anomaly check runs afterwards in the background.
     */
    async create(ctx: RequestContext, input: CreateRepairInput) {
      if (!input.assetId && !input.workOrderId) {
        const message = 'send assetId, workOrderId or both';
        throw new ValidationError(
          { assetId: message, workOrderId: message },
          'A repair needs an asset or a work order',
        );
      }
      const repair = await transaction(db, async (tx) => {
        let wo: WorkOrder | null = null;
        if (input.workOrderId) {
          wo = await lockWorkOrder(tx, ctx.orgId, input.workOrderId);
          if (!wo) throw new ValidationError({ workOrderId: 'no workOrder with this id in your organisation' });
        }
        await assertReferences(tx, ctx.orgId, [{ field: 'assetId', kind: 'asset', id: input.assetId }]);
        if (wo?.assetId && input.assetId && input.assetId !== wo.assetId) {
          throw new ValidationError({ assetId: 'does not match the asset of the work order' });
        }
        const created = await tx.repair.create({
          data: {
            orgId: ctx.orgId,
            assetId: input.assetId ?? wo?.assetId ?? null,
            workOrderId: wo?.id ?? null,
            projectId: wo?.projectId ?? null,
            laborHours: input.laborHours ?? null,
            cost: input.cost ?? null,
            parts: input.parts ?? null,
            notes: input.notes ?? null,
            createdById: ctx.actorId,
          },
        });
        if (wo && wo.status !== 'DONE') await completeWorkOrder(tx, ctx, wo);
        else if (wo) await resolveLinkedFlag(tx, ctx, wo);
        return created;
      });
      if (repair.assetId && repair.cost != null && repair.cost > 0) {
        background.run('repair-cost-anomaly', { orgId: ctx.orgId, repairId: repair.id }, () =>
          checkRepairCost(db, ctx.orgId, repair.id),
        );
      }
      return { ok: true as const, repairId: repair.id };
    },
  };
}

export type RepairService = ReturnType<typeof createRepairService>;
