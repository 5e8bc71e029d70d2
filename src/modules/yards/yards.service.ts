import type { Prisma, Yard } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import { batchSummary, readBatchEnvelope, validateEntries, type BatchResultOf } from '../../core/batch.ts';
import { decodeCursor, paginate } from '../../core/pagination.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { listYards } from './yards.repository.ts';
import { yardHoldsStock } from '../parts/parts.repository.ts';
import {
  coordinatesPaired,
  CreateYardBody,
  toYardRow,
  UNPAIRED_ERROR,
  UPDATABLE_YARD_FIELDS,
  type CreateYardInput,
  type UpdateYardInput,
  type YardBatchResponse,
} from './yards.schemas.ts';

export const YARD_BATCH_CAP = 50;

const duplicateName = (name: string) =>
  new ValidationError(
    { name: 'a yard with this name already exists' },
    `A yard named "${name}" already exists in this organisation`,
  );

/**
 * Inserts a yard, or returns null when the name is taken. ON CONFLICT DO NOTHING on the (orgId, name)
 * unique index: a concurrent create with the same name waits and then reports the duplicate without
 * aborting the caller's transaction, and earlier entries of the same batch count too.
 */
async function insertYard(tx: Tx, orgId: string, input: CreateYardInput): Promise<Yard | null> {
  const rows = await tx.yard.createManyAndReturn({
    data: [
      {
        orgId,
        name: input.name,
        lat: input.lat ?? null,
        lng: input.lng ?? null,
        address: input.address ?? null,
        notes: input.notes ?? null,
      },
    ],
    skipDuplicates: true,
  });
  return rows[0] ?? null;
}

/** Yards list alphabetically (name, then id); the cursor is the last row's (name, id). */
function nameCursor(cursor: (string | number | null)[] | null): [string, string] | null {
  if (!cursor) return null;
  const [name, id] = cursor;
  if (typeof name !== 'string' || typeof id !== 'string')
    throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
  return [name, id];
}

export function createYardService({ db }: Pick<ServiceDeps, 'db'>) {
  async function findOwned(tx: Tx, ctx: RequestContext, id: string): Promise<Yard> {
    const yard = await tx.yard.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!yard) throw notFound('Yard');
    return yard;
  }

  return {
    async list(ctx: RequestContext, query: { limit: number; cursor?: string }) {
      const rows = await listYards(db.sql, ctx.orgId, nameCursor(decodeCursor(query.cursor, 2)), query.limit + 1);
      const { page, nextCursor } = paginate(rows, query.limit, (y) => [y.name, y.id]);
      return { ok: true as const, yards: page.map(toYardRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreateYardInput) {
      const yard = await transaction(db, (tx) => insertYard(tx, ctx.orgId, input));
      if (!yard) throw duplicateName(input.name);
      return { ok: true as const, yardId: yard.id, createdAt: yard.createdAt.toISOString() };
    },

    async createBatch(ctx: RequestContext, body: unknown) {
      const entries = readBatchEnvelope(body, YARD_BATCH_CAP);
      const { valid, failures } = validateEntries(entries, CreateYardBody);
      const results: BatchResultOf<typeof YardBatchResponse>[] = failures.map(({ index, ok, error, fieldErrors }) => ({
        index,
        ok,
        error,
        fieldErrors,
      }));
      await transaction(db, async (tx) => {
        for (const { index, data } of valid) {
          const yard = await insertYard(tx, ctx.orgId, data);
          if (yard) results.push({ index, ok: true, yardId: yard.id, createdAt: yard.createdAt.toISOString() });
          else
            results.push({
              index,
              ok: false,
              error: 'validation_failed',
              fieldErrors: duplicateName(data.name).fieldErrors,
            });
        }
      });
      results.sort((a, b) => a.index - b.index);
      return { ok: true as const, results, summary: batchSummary(entries.length, results) };
    },

    async get(ctx: RequestContext, id: string) {
      const yard = await findOwned(db.prisma, ctx, id);
      const [assetCount, toolCount] = await Promise.all([
        db.prisma.asset.count({ where: { orgId: ctx.orgId, yardId: id } }),
        db.prisma.tool.count({ where: { orgId: ctx.orgId, assignedYardId: id } }),
      ]);
      return { ok: true as const, yard: { ...toYardRow(yard), assetCount, toolCount } };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateYardInput) {
      const fields = UPDATABLE_YARD_FIELDS.filter((f) => patch[f] !== undefined);
      if (fields.length === 0) {
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_YARD_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      }
      try {
        await transaction(db, async (tx) => {
          const before = await findOwned(tx, ctx, id);
          const merged = {
            lat: patch.lat !== undefined ? patch.lat : before.lat,
            lng: patch.lng !== undefined ? patch.lng : before.lng,
          };
          if (!coordinatesPaired(merged))
            throw new ValidationError({ [merged.lat == null ? 'lat' : 'lng']: UNPAIRED_ERROR });
          if (patch.name && patch.name !== before.name) {
            const clash = await tx.yard.findFirst({
              where: { orgId: ctx.orgId, name: patch.name, id: { not: id } },
              select: { id: true },
            });
            if (clash) throw duplicateName(patch.name);
          }
          const data: Prisma.YardUncheckedUpdateInput = {};
          for (const field of fields) (data as Record<string, unknown>)[field] = patch[field];
          await tx.yard.update({ where: { id: before.id }, data });
        });
      } catch (err) {
        // Another request took the name between our check and our write.
        if (isUniqueViolation(err) && patch.name) throw duplicateName(patch.name);
        throw err;
      }
      return { ok: true as const, yardId: id };
    },

    /**
     * Assets and tools at the yard are unassigned (set to null) in the same transaction; a yard holding stock of
     * any part is refused (409 yard_has_stock): move or adjust it first.
     */
    async remove(ctx: RequestContext, id: string) {
      return transaction(db, async (tx) => {
        await findOwned(tx, ctx, id);
        if (await yardHoldsStock(tx, ctx.orgId, id))
          throw conflict('yard_has_stock', 'The yard holds stock of some parts: transfer or adjust it to zero first');
        const assets = await tx.asset.updateMany({ where: { orgId: ctx.orgId, yardId: id }, data: { yardId: null } });
        const tools = await tx.tool.updateMany({
          where: { orgId: ctx.orgId, assignedYardId: id },
          data: { assignedYardId: null },
        });
        // A concurrent delete of the same yard finds nothing to delete here and answers 404.
        const deleted = await tx.yard.deleteMany({ where: { id, orgId: ctx.orgId } });
        if (deleted.count === 0) throw notFound('Yard');
        return { ok: true as const, yardId: id, unassignedAssets: assets.count, unassignedTools: tools.count };
      });
    },
  };
}

export type YardService = ReturnType<typeof createYardService>;
