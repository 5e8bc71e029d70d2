import type { Asset } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { batchSummary, validateEntries, readBatchEnvelope, type BatchResultOf } from '../../core/batch.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { assertReferences } from '../shared/references.ts';
import { applyAssetPatch, insertAsset, setFuelCards } from './assets.operations.ts';
import { listAssetRows, lockOwnedAsset } from './assets.repository.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import {
  CreateAssetBody,
  toAssetDetail,
  UPDATABLE_FIELDS,
  type CreateAssetInput,
  type UpdateAssetInput,
  type AssetBatchResponse,
} from './assets.schemas.ts';

export const ASSET_BATCH_CAP = 50;

export function createAssetService({ db, billing }: Pick<ServiceDeps, 'db' | 'billing'>) {
  async function findOwned(tx: Tx, ctx: RequestContext, id: string): Promise<Asset> {
    const asset = await tx.asset.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!asset) throw notFound('Asset');
    return asset;
  }

  return {
    async list(ctx: RequestContext, query: { limit: number; cursor?: string }) {
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await listAssetRows(db.sql, ctx.orgId, after, query.limit + 1);
      const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.createdAt, r.id]);
      return { ok: true as const, assets: page, nextCursor };
    },

    async create(ctx: RequestContext, input: CreateAssetInput) {
      const asset = await transaction(db, async (tx) => {
        await assertReferences(tx, ctx.orgId, [{ field: 'yardId', kind: 'yard', id: input.yardId }]);
        return insertAsset(tx, ctx, input);
      });
      billing.schedule(ctx.orgId);
      return { ok: true as const, assetId: asset.id };
    },

    /** Entries are validated one by one; all valid entries are created in one transaction. */
    async createBatch(ctx: RequestContext, body: unknown) {
      const entries = readBatchEnvelope(body, ASSET_BATCH_CAP);
      const { valid, failures } = validateEntries(entries, CreateAssetBody);
      const results: BatchResultOf<typeof AssetBatchResponse>[] = [...failures];
      await transaction(db, async (tx) => {
        for (const { index, data } of valid) {
          try {
            await assertReferences(tx, ctx.orgId, [{ field: 'yardId', kind: 'yard', id: data.yardId }]);
          } catch (err) {
            if (!(err instanceof ValidationError)) throw err;
            results.push({ index, ok: false, error: 'validation_failed', fieldErrors: err.fieldErrors });
            continue;
          }
          const asset = await insertAsset(tx, ctx, data);
          results.push({ index, ok: true, assetId: asset.id });
        }
      });
      results.sort((a, b) => a.index - b.index);
      if (results.some((r) => r.ok)) billing.schedule(ctx.orgId);
      return { ok: true as const, results, summary: batchSummary(entries.length, results) };
    },

    async get(ctx: RequestContext, id: string) {
      const asset = await findOwned(db.prisma, ctx, id);
      const cards = await db.prisma.assetFuelCard.findMany({
        where: { orgId: ctx.orgId, assetId: id },
        orderBy: { cardNumber: 'asc' },
        select: { cardNumber: true },
      });
      const repairs = await db.prisma.repair.aggregate({
        where: { orgId: ctx.orgId, assetId: id },
        _sum: { cost: true },
        _count: { _all: true },
      });
      return {
        ok: true as const,
        asset: toAssetDetail(
          asset,
          { total: repairs._sum.cost ?? 0, count: repairs._count._all },
          new Date(),
          cards.map((c) => c.cardNumber),
        ),
      };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateAssetInput) {
      const fields = UPDATABLE_FIELDS.filter((f) => patch[f] !== undefined);
      if (fields.length === 0 && patch.fuelCardNumbers === undefined) {
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      }
      await transaction(db, async (tx) => {
        // Locked: concurrent PATCHes compare against each other's result, so one change emits one event.
        const before = await lockOwnedAsset(tx, ctx.orgId, id);
        if (!before) throw notFound('Asset');
        if (patch.parentAssetId === id)
          throw new ValidationError({ parentAssetId: 'an asset cannot be attached to itself' });
        await assertReferences(tx, ctx.orgId, [
          { field: 'yardId', kind: 'yard', id: patch.yardId },
          { field: 'parentAssetId', kind: 'asset', id: patch.parentAssetId },
          { field: 'primaryOperatorId', kind: 'user', id: patch.primaryOperatorId },
        ]);
        await applyAssetPatch(tx, ctx, before, patch);
        if (patch.fuelCardNumbers) await setFuelCards(tx, ctx.orgId, id, patch.fuelCardNumbers);
      });
      return { ok: true as const, assetId: id };
    },
  };
}

export type AssetService = ReturnType<typeof createAssetService>;
