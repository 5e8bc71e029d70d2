import type { ServiceProgramItem } from '../../generated/prisma/client.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import {
  lockReminders,
  readMeter,
  termsOf,
  writeEvaluation,
} from '../service-reminders/service-reminders.operations.ts';
import { evaluate } from '../service-reminders/service-reminders.rules.ts';
import { checkIntervals, insertReminder, ownedTask } from '../service-reminders/service-reminders.service.ts';
import {
  toItemRow,
  toProgramRow,
  type CreateProgramInput,
  type ProgramItemInput,
  type UpdateProgramInput,
} from './service-programs.schemas.ts';

const itemTerms = (i: ProgramItemInput) => ({
  serviceTaskId: i.serviceTaskId,
  meterInterval: i.meterInterval ?? null,
  dayInterval: i.dayInterval ?? null,
  dueSoonMeter: i.dueSoonMeter ?? null,
  dueSoonDays: i.dueSoonDays ?? null,
});

/** Every item needs an interval and a task of the organisation; fieldErrors name the item (items.2.dayInterval). */
async function checkItems(tx: Tx, orgId: string, items: ProgramItemInput[]) {
  for (const [n, item] of items.entries()) {
    try {
      checkIntervals(item);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      throw new ValidationError(
        Object.fromEntries(Object.entries(err.fieldErrors).map(([k, v]) => [`items.${n}.${k}`, v])),
      );
    }
    await ownedTask(tx, orgId, item.serviceTaskId);
  }
}

export function createServiceProgramService({ db, clock }: Pick<ServiceDeps, 'db' | 'clock'>) {
  async function lockProgram(tx: Tx, ctx: RequestContext, id: string) {
    const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id FROM service_programs WHERE id = $1 AND "orgId" = $2 FOR UPDATE`,
      id,
      ctx.orgId,
    );
    if (rows.length === 0) throw notFound('Service program');
    return tx.serviceProgram.findUniqueOrThrow({ where: { id }, include: { items: { orderBy: { position: 'asc' } } } });
  }

  /** Creates an item's reminder on every asset the program is applied to. */
  async function spreadItem(tx: Tx, ctx: RequestContext, programId: string, item: ServiceProgramItem) {
    const applied = await tx.serviceProgramAsset.findMany({
      where: { programId },
      include: { asset: { select: { id: true, lifecycleStatus: true } } },
    });
    const now = clock.now();
    for (const { asset } of applied) {
      await insertReminder(
        tx,
        ctx,
        asset,
        { ...item, serviceProgramId: programId, serviceProgramItemId: item.id },
        now,
      );
    }
  }

  /** An item's new terms reach each of its reminders, re-evaluated (the cycle's baselines stay). */
  async function updateItemReminders(tx: Tx, ctx: RequestContext, item: ServiceProgramItem) {
    const ids = await tx.serviceReminder.findMany({ where: { serviceProgramItemId: item.id }, select: { id: true } });
    const now = clock.now();
    for (const r of await lockReminders(
      tx,
      ctx.orgId,
      ids.map((i) => i.id),
    )) {
      const terms = { ...termsOf(r), ...itemTerms(item) };
      const ev = evaluate(terms, await readMeter(tx, r.assetId, now), now);
      await writeEvaluation(tx, ctx, r, ev, { data: { ...terms } });
    }
  }

  return {
    async list(ctx: RequestContext, query: { limit: number; cursor?: string }) {
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await db.prisma.serviceProgram.findMany({
        where: {
          orgId: ctx.orgId,
          ...(after ? { OR: [{ createdAt: { gt: after[0] } }, { createdAt: after[0], id: { gt: after[1] } }] } : {}),
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: query.limit + 1,
      });
      const { page, nextCursor } = paginate(rows, query.limit, (p) => [p.createdAt.toISOString(), p.id]);
      return { ok: true as const, servicePrograms: page.map(toProgramRow), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      const p = await db.prisma.serviceProgram.findFirst({
        where: { id, orgId: ctx.orgId },
        include: { items: { orderBy: { position: 'asc' }, include: { serviceTask: { select: { name: true } } } } },
      });
      if (!p) throw notFound('Service program');
      const assetCount = await db.prisma.serviceProgramAsset.count({ where: { programId: id } });
      return {
        ok: true as const,
        serviceProgram: { ...toProgramRow(p), items: p.items.map(toItemRow), assetCount },
      };
    },

    async create(ctx: RequestContext, input: CreateProgramInput) {
      const program = await transaction(db, async (tx) => {
        await checkItems(tx, ctx.orgId, input.items);
        return tx.serviceProgram.create({
          data: {
            orgId: ctx.orgId,
            name: input.name,
            description: input.description ?? null,
            autoWorkOrder: input.autoWorkOrder ?? false,
            items: { create: input.items.map((i, position) => ({ ...itemTerms(i), position })) },
          },
        });
      });
      return { ok: true as const, serviceProgramId: program.id };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateProgramInput) {
      await transaction(db, async (tx) => {
        const program = await lockProgram(tx, ctx, id);
        await tx.serviceProgram.update({
          where: { id },
          data: {
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.description !== undefined ? { description: patch.description } : {}),
            ...(patch.autoWorkOrder !== undefined ? { autoWorkOrder: patch.autoWorkOrder } : {}),
          },
        });
        if (!patch.items) return;
        await checkItems(tx, ctx.orgId, patch.items);
        const existing = new Map(program.items.map((i) => [i.id, i]));
        for (const [n, entry] of patch.items.entries()) {
          if (entry.id !== undefined && !existing.has(entry.id))
            throw new ValidationError({ [`items.${n}.id`]: 'no item with this id in this program' });
        }
        const kept = new Set(patch.items.map((i) => i.id).filter((i) => i !== undefined));
        // Removed items take their reminders with them.
        const removed = program.items.filter((i) => !kept.has(i.id)).map((i) => i.id);
        if (removed.length > 0) {
          await tx.serviceReminder.deleteMany({ where: { serviceProgramItemId: { in: removed } } });
          await tx.serviceProgramItem.deleteMany({ where: { id: { in: removed } } });
        }
        for (const [position, entry] of patch.items.entries()) {
          const before = entry.id ? existing.get(entry.id) : undefined;
          if (before) {
            const item = await tx.serviceProgramItem.update({
              where: { id: before.id },
              data: { ...itemTerms(entry), position },
            });
            const changed = (
              ['serviceTaskId', 'meterInterval', 'dayInterval', 'dueSoonMeter', 'dueSoonDays'] as const
            ).some((k) => before[k] !== item[k]);
            if (changed) await updateItemReminders(tx, ctx, item);
          } else {
            const item = await tx.serviceProgramItem.create({ data: { programId: id, ...itemTerms(entry), position } });
            await spreadItem(tx, ctx, id, item);
          }
        }
      });
      return { ok: true as const, serviceProgramId: id };
    },

    /** Applies the program: one reminder per item on each asset not yet under it; a summary of what happened. */
    async applyToAssets(ctx: RequestContext, id: string, assetIds: string[]) {
      const unique = [...new Set(assetIds)];
      return transaction(db, async (tx) => {
        const program = await lockProgram(tx, ctx, id);
        const assets = await tx.asset.findMany({
          where: { orgId: ctx.orgId, id: { in: unique } },
          select: { id: true, lifecycleStatus: true },
        });
        const found = new Map(assets.map((a) => [a.id, a]));
        const already = new Set(
          (
            await tx.serviceProgramAsset.findMany({
              where: { programId: id, assetId: { in: [...found.keys()] } },
              select: { assetId: true },
            })
          ).map((a) => a.assetId),
        );
        const toApply = unique.filter((a) => found.has(a) && !already.has(a));
        await tx.serviceProgramAsset.createMany({
          data: toApply.map((assetId) => ({ programId: id, assetId, orgId: ctx.orgId })),
        });
        const now = clock.now();
        let remindersCreated = 0;
        for (const assetId of toApply) {
          for (const item of program.items) {
            await insertReminder(
              tx,
              ctx,
              found.get(assetId)!,
              { ...item, serviceProgramId: id, serviceProgramItemId: item.id },
              now,
            );
            remindersCreated++;
          }
        }
        const notFoundIds = unique.filter((a) => !found.has(a));
        const alreadyIds = unique.filter((a) => already.has(a));
        return {
          ok: true as const,
          serviceProgramId: id,
          summary: {
            received: assetIds.length,
            applied: toApply.length,
            alreadyApplied: alreadyIds.length,
            notFound: notFoundIds.length,
            remindersCreated,
          },
          appliedAssetIds: toApply,
          alreadyAppliedAssetIds: alreadyIds,
          notFoundAssetIds: notFoundIds,
        };
      });
    },

    /** Removes the program from an asset: its reminders of the program are deleted, or kept detached. */
    async removeFromAsset(ctx: RequestContext, id: string, assetId: string, keepReminders: boolean) {
      return transaction(db, async (tx) => {
        await lockProgram(tx, ctx, id);
        const { count } = await tx.serviceProgramAsset.deleteMany({ where: { programId: id, assetId } });
        if (count === 0) throw notFound('Asset under this program');
        const where = { serviceProgramId: id, assetId };
        const moved = keepReminders
          ? await tx.serviceReminder.updateMany({ where, data: { serviceProgramId: null, serviceProgramItemId: null } })
          : await tx.serviceReminder.deleteMany({ where });
        return {
          ok: true as const,
          serviceProgramId: id,
          assetId,
          remindersDeleted: keepReminders ? 0 : moved.count,
          remindersDetached: keepReminders ? moved.count : 0,
        };
      });
    },
  };
}

export type ServiceProgramService = ReturnType<typeof createServiceProgramService>;
