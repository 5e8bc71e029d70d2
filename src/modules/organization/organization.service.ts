import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { collapseLayers } from '../parts/part-ledger.operations.ts';
import { organizationWire, type UpdateOrganizationInput } from './organization.schemas.ts';

export function createOrganizationService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async get(ctx: RequestContext) {
      const org = await db.prisma.organization.findUnique({ where: { id: ctx.orgId } });
      if (!org) throw notFound('Organization');
      return { ok: true as const, organization: organizationWire(org) };
    },

    /**
     * Switching to AVERAGE merges the open cost layers of every part and yard into one at their value, so no
     * shelf value changes; the stock rows are locked first so no movement runs between the switch and the merge.
     * Switching to FIFO keeps the layers as they are (a merged layer is simply the oldest).
     */
    async update(ctx: RequestContext, patch: UpdateOrganizationInput) {
      return transaction(db, async (tx) => {
        const before = await tx.$queryRaw<{ method: string }[]>`
          SELECT "inventoryCostMethod" AS "method" FROM "organizations" WHERE "id" = ${ctx.orgId} FOR UPDATE`;
        if (!before[0]) throw notFound('Organization');
        const org = await tx.organization.update({
          where: { id: ctx.orgId },
          data: {
            ...(patch.currency ? { currency: patch.currency } : {}),
            ...(patch.inventoryCostMethod ? { inventoryCostMethod: patch.inventoryCostMethod } : {}),
          },
        });
        if (patch.inventoryCostMethod === 'AVERAGE' && before[0].method !== 'AVERAGE') {
          await tx.$queryRaw`
            SELECT 1 FROM "part_stock" WHERE "orgId" = ${ctx.orgId} AND "onHand" > 0
            ORDER BY "partId", "yardId" FOR UPDATE`;
          await collapseLayers(tx, ctx.orgId);
        }
        return { ok: true as const, organization: organizationWire(org) };
      });
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
