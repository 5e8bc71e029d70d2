import { transaction } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { auditText, lockOwnedTool, recordToolEvent } from './tools.repository.ts';
import { LOW_STOCK_FALLBACK, type AdjustStockInput, type MarkServicedInput } from './tools.schemas.ts';

/** A service date this far ahead of the server clock is still accepted (device clock skew). */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

export function createToolStock({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /**
     * The arithmetic happens in SQL on a row locked FOR UPDATE, so concurrent adjustments queue on the row
     * and none is lost; the result is clamped to 0..2^31-1.
     */
    async adjustStock(ctx: RequestContext, id: string, input: AdjustStockInput) {
      return transaction(db, async (tx) => {
        const locked = await tx.$queryRaw<
          { isConsumable: boolean; stockLevel: number | null; minStockLevel: number | null; name: string }[]
        >`
          SELECT "isConsumable", "stockLevel", "minStockLevel", "name" FROM "tools"
          WHERE "id" = ${id} AND "orgId" = ${ctx.orgId} FOR UPDATE`;
        const tool = locked[0];
        if (!tool) throw notFound('Tool');
        if (!tool.isConsumable) throw conflict('not_consumable', 'Stock can only be adjusted on consumables');
        const updated = await tx.$queryRaw<{ stockLevel: number }[]>`
          UPDATE "tools"
          SET "stockLevel" = GREATEST(0, LEAST(2147483647, COALESCE("stockLevel", 0)::bigint + ${input.delta}::bigint))::int,
              "updatedAt" = now()
          WHERE "id" = ${id} AND "orgId" = ${ctx.orgId}
          RETURNING "stockLevel"`;
        const previousStockLevel = Number(tool.stockLevel ?? 0);
        const newStockLevel = Number(updated[0].stockLevel);
        const threshold = tool.minStockLevel ?? LOW_STOCK_FALLBACK;
        const crossedThreshold = previousStockLevel > threshold && newStockLevel <= threshold;
        const event = await recordToolEvent(tx, ctx, id, {
          kind: 'AUDIT',
          description: auditText('stock_adjusted', [
            ['delta', input.delta],
            ['new_level', newStockLevel],
            ['note', input.note],
          ]),
        });
        if (crossedThreshold) {
          await emit(tx, ctx.orgId, 'tool.low_stock', {
            toolId: id,
            name: tool.name,
            previousStockLevel,
            newStockLevel,
            minStockLevel: tool.minStockLevel,
            thresholdUsed: threshold,
            eventId: event.id,
            actorId: ctx.actorId,
            at: event.createdAt.toISOString(),
          });
        }
        return {
          ok: true as const,
          toolId: id,
          eventId: event.id,
          previousStockLevel,
          newStockLevel,
          crossedThreshold,
        };
      });
    },

    async markServiced(ctx: RequestContext, id: string, input: MarkServicedInput) {
      return transaction(db, async (tx) => {
        const tool = await lockOwnedTool(tx, ctx, id);
        if (!tool.pmIntervalDays)
          throw new ValidationError({ pmIntervalDays: 'is not set on this tool; set it with PATCH first' });
        const now = new Date();
        const servicedAt = input.at ?? now;
        if (servicedAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS)
          throw new ValidationError({ at: 'cannot be in the future' });
        await tx.tool.update({ where: { id }, data: { lastServicedAt: servicedAt } });
        const event = await recordToolEvent(tx, ctx, id, {
          kind: 'AUDIT',
          description: auditText('pm_serviced', [
            ['interval', `${tool.pmIntervalDays}d`],
            ['serviced_at', servicedAt.toISOString()],
            ['note', input.note],
          ]),
        });
        const previousLastServicedAt = tool.lastServicedAt?.toISOString() ?? null;
        await emit(tx, ctx.orgId, 'tool.serviced', {
          toolId: id,
          name: tool.name,
          previousLastServicedAt,
          newLastServicedAt: servicedAt.toISOString(),
          pmIntervalDays: tool.pmIntervalDays,
          actorId: ctx.actorId,
          note: input.note ?? null,
          eventId: event.id,
        });
        return {
          ok: true as const,
          toolId: id,
          eventId: event.id,
          previousLastServicedAt,
          newLastServicedAt: servicedAt.toISOString(),
        };
      });
    },
  };
}
