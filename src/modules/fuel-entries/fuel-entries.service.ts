import { ensureMonths } from '../../db/partitions.ts';
import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { insertFuelEntry, updateFuelEntry } from './fuel-entries.operations.ts';
import {
  findFuelEntry,
  findFuelEntryByExternalId,
  listFuelEntries,
  rejectFillReading,
} from './fuel-entries.repository.ts';
import {
  toFuelEntry,
  type CreateFuelEntryInput,
  type ListFuelEntriesInput,
  type UpdateFuelEntryInput,
} from './fuel-entries.schemas.ts';

export function createFuelEntryService({ db }: Pick<ServiceDeps, 'db'>) {
  /** A new fill, or (its externalId known) the settlement of an earlier one: status 201 or 200. */
  async function upsert(ctx: RequestContext, input: CreateFuelEntryInput) {
    // The fill's reading is a meter log of that month: its partition first (a backdated fill creates it).
    await ensureMonths(db, 'meter_logs', [input.fueledAt]);
    return transaction(db, async (tx) => {
      const existing = input.externalId ? await findFuelEntryByExternalId(tx, ctx.orgId, input.externalId) : null;
      if (!existing) {
        const entry = await insertFuelEntry(tx, ctx, input);
        return { status: 201 as const, body: { ok: true as const, fuelEntryId: entry.id, logId: entry.logId } };
      }
      if (existing.assetId !== input.assetId) {
        throw new ValidationError({
          assetId: `the fuel entry with this externalId is on another asset (${existing.assetId})`,
        });
      }
      const { assetId: _assetId, ...patch } = input;
      const entry = await updateFuelEntry(tx, ctx, existing, patch);
      return { status: 200 as const, body: { ok: true as const, fuelEntryId: entry.id, logId: entry.logId } };
    });
  }

  return {
    async create(ctx: RequestContext, input: CreateFuelEntryInput) {
      try {
        return await upsert(ctx, input);
      } catch (err) {
        // Two posts of one externalId raced: the loser finds the winner's entry and settles it.
        if (!input.externalId || !isUniqueViolation(err)) throw err;
        return upsert(ctx, input);
      }
    },

    async list(ctx: RequestContext, query: ListFuelEntriesInput) {
      const rows = await listFuelEntries(db.sql, ctx.orgId, query, timeIdCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.fueledAt.toISOString(), r.id]);
      return { ok: true as const, fuelEntries: page.map(toFuelEntry), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      const entry = await findFuelEntry(db.prisma, ctx.orgId, id);
      if (!entry) throw notFound('Fuel entry');
      return { ok: true as const, fuelEntry: toFuelEntry(entry) };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateFuelEntryInput) {
      if (Object.values(patch).every((v) => v === undefined))
        throw new ValidationError({ body: 'send at least one field to change' }, 'The patch is empty');
      if (patch.fueledAt) await ensureMonths(db, 'meter_logs', [patch.fueledAt]);
      return transaction(db, async (tx) => {
        const before = await findFuelEntry(tx, ctx.orgId, id);
        if (!before) throw notFound('Fuel entry');
        const after = await updateFuelEntry(tx, ctx, before, patch);
        return { ok: true as const, fuelEntryId: after.id, logId: after.logId };
      });
    },

    /** The fill goes; its reading stays in the meter history (later deltas were computed from it). */
    async remove(ctx: RequestContext, id: string) {
      return transaction(db, async (tx) => {
        const entry = await findFuelEntry(tx, ctx.orgId, id);
        if (!entry) throw notFound('Fuel entry');
        await tx.fuelEntry.delete({ where: { id: entry.id } });
        if (entry.void && entry.logId) await rejectFillReading(tx, ctx.orgId, entry.logId, ctx.actorId);
        return { ok: true as const, fuelEntryId: entry.id };
      });
    },
  };
}

export type FuelEntryService = ReturnType<typeof createFuelEntryService>;
