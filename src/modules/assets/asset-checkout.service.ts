import type { Asset } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { assertReferences } from '../shared/references.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import type { CheckinAssetInput, CheckoutAssetInput } from './asset-checkout.schemas.ts';
import { toCheckoutState } from './assets.schemas.ts';
import { lockOwnedAsset } from './assets.repository.ts';

/** Sold and archived assets have left the fleet; like RETIRED tools they cannot be checked out. */
const UNAVAILABLE = new Set<Asset['lifecycleStatus']>(['SOLD', 'ARCHIVED']);

const CLEARED = {
  checkedOutToUserId: null,
  checkedOutToProjectId: null,
  checkedOutAt: null,
  expectedReturnAt: null,
  checkoutNote: null,
};

/**
 * Reads the asset under a row lock, so concurrent checkouts and check-ins of one asset run one after
 * the other: two users racing for a free asset get one success and one 409, never two bindings.
 */
async function lockOwned(tx: Tx, ctx: RequestContext, id: string): Promise<Asset> {
  const asset = await lockOwnedAsset(tx, ctx.orgId, id);
  if (!asset) throw notFound('Asset');
  return asset;
}

export function createAssetCheckoutService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /**
     * The body names the whole new binding. Same binding as now: a silent no-op. The asset held by a
     * user and the request names another user (or none): 409 unless force. Otherwise the binding is
     * (re)written and asset.checked_out is emitted.
     */
    async checkout(ctx: RequestContext, id: string, input: CheckoutAssetInput) {
      return transaction(db, async (tx) => {
        const asset = await lockOwned(tx, ctx, id);
        await assertReferences(tx, ctx.orgId, [
          { field: 'toUserId', kind: 'user', id: input.toUserId },
          { field: 'toProjectId', kind: 'project', id: input.toProjectId },
        ]);
        const toUserId = input.toUserId ?? null;
        const toProjectId = input.toProjectId ?? null;
        const current = toCheckoutState(asset);
        if (current && current.toUserId === toUserId && current.toProjectId === toProjectId) {
          return { ok: true as const, assetId: id, changed: false, checkout: current };
        }
        if (UNAVAILABLE.has(asset.lifecycleStatus)) {
          throw conflict('asset_unavailable', `The asset is ${asset.lifecycleStatus} and cannot be checked out`);
        }
        if (current?.toUserId && current.toUserId !== toUserId && !input.force) {
          throw conflict(
            'asset_checked_out',
            'The asset is checked out to another user; check it in first or send force: true',
          );
        }
        const after = await tx.asset.update({
          where: { id },
          data: {
            checkedOutToUserId: toUserId,
            checkedOutToProjectId: toProjectId,
            checkedOutAt: new Date(),
            expectedReturnAt: input.expectedReturnAt ?? null,
            checkoutNote: input.note ?? null,
          },
        });
        await emit(tx, ctx.orgId, 'asset.checked_out', {
          assetId: id,
          nickname: after.nickname,
          toUserId,
          toProjectId,
          actorId: ctx.actorId,
          expectedReturnAt: after.expectedReturnAt?.toISOString() ?? null,
          note: after.checkoutNote,
          ...(current ? { fromUserId: current.toUserId, fromProjectId: current.toProjectId } : {}),
          at: (after.checkedOutAt as Date).toISOString(),
        });
        return { ok: true as const, assetId: id, changed: true, checkout: toCheckoutState(after) };
      });
    },

    /** Clears the binding and emits asset.checked_in; an asset that is not checked out is a silent no-op. */
    async checkin(ctx: RequestContext, id: string, input: CheckinAssetInput) {
      return transaction(db, async (tx) => {
        const asset = await lockOwned(tx, ctx, id);
        const current = toCheckoutState(asset);
        if (!current) return { ok: true as const, assetId: id, changed: false, checkout: null };
        await tx.asset.update({ where: { id }, data: CLEARED });
        await emit(tx, ctx.orgId, 'asset.checked_in', {
          assetId: id,
          nickname: asset.nickname,
          fromUserId: current.toUserId,
          fromProjectId: current.toProjectId,
          note: input?.note ?? null,
          checkedOutAt: current.checkedOutAt,
          actorId: ctx.actorId,
          at: new Date().toISOString(),
        });
        return { ok: true as const, assetId: id, changed: true, checkout: null };
      });
    },
  };
}

export type AssetCheckoutService = ReturnType<typeof createAssetCheckoutService>;
