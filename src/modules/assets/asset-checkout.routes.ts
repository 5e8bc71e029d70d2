import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import { AssetCheckoutResponse, CheckinAssetBody, CheckoutAssetBody } from './asset-checkout.schemas.ts';

export const assetCheckoutRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const checkouts = services.assetCheckout;
    const tags = ['assets'];

    app.post(
      '/assets/:id/checkout',
      {
        config: { scope: 'assets:write' },
        schema: {
          operationId: 'checkoutAsset',
          tags,
          summary: 'Check an asset out to a user and/or a project (idempotent for the same target)',
          params: IdParams,
          body: CheckoutAssetBody,
          response: {
            200: AssetCheckoutResponse,
            409: ErrorResponse.describe(
              'asset_checked_out: held by another user (send force: true); asset_unavailable: SOLD or ARCHIVED',
            ),
          },
        },
      },
      (req) => checkouts.checkout(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/assets/:id/checkin',
      {
        config: { scope: 'assets:write' },
        schema: {
          operationId: 'checkinAsset',
          tags,
          summary: 'Check an asset in (a no-op when it is not checked out)',
          params: IdParams,
          body: CheckinAssetBody,
          response: { 200: AssetCheckoutResponse },
        },
      },
      (req) => checkouts.checkin(contextOf(req), req.params.id, req.body),
    );
  };
