import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { batchRoute } from '../../core/batch.ts';
import { ASSET_BATCH_CAP } from './assets.service.ts';
import { contextOf } from '../../core/context.ts';
import { z } from 'zod';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  AssetBatchResponse,
  AssetDetailResponse,
  AssetIdResponse,
  CreateAssetBody,
  ListAssetsQuery,
  ListAssetsResponse,
  UpdateAssetBody,
} from './assets.schemas.ts';

export const assetRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const batch = batchRoute(CreateAssetBody, ASSET_BATCH_CAP);
    const assets = services.assets;
    const tags = ['assets'];

    app.get(
      '/assets',
      {
        config: { scope: 'assets:read' },
        schema: {
          operationId: 'listAssets',
          tags,
          summary: 'List assets, newest first',
          querystring: ListAssetsQuery,
          response: { 200: ListAssetsResponse },
        },
      },
      (req) => assets.list(contextOf(req), req.query),
    );

    app.post(
      '/assets',
      {
        config: { scope: 'assets:write' },
        schema: {
          operationId: 'createAsset',
          tags,
          summary: 'Create an asset',
          body: CreateAssetBody,
          response: { 201: AssetIdResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await assets.create(contextOf(req), req.body)),
    );

    app.post(
      '/assets/batch',
      {
        config: { scope: 'assets:write' },
        schema: {
          operationId: 'createAssetsBatch',
          tags,
          summary: 'Create up to 50 assets; each entry succeeds or fails on its own',
          body: batch.body,
          response: { 200: AssetBatchResponse },
        },
        validatorCompiler: batch.validatorCompiler,
      },
      (req) => assets.createBatch(contextOf(req), req.body),
    );

    app.get(
      '/assets/:id',
      {
        config: { scope: 'assets:read' },
        schema: {
          operationId: 'getAsset',
          tags,
          summary: 'Asset detail',
          params: IdParams,
          response: { 200: AssetDetailResponse },
        },
      },
      (req) => assets.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/assets/:id',
      {
        config: { scope: 'assets:write' },
        schema: {
          operationId: 'updateAsset',
          tags,
          summary: 'Update an asset',
          params: IdParams,
          body: UpdateAssetBody,
          response: {
            200: AssetIdResponse,
            409: ErrorResponse.extend({ cardNumbers: z.array(z.string()).optional() }).describe(
              'fuel_card_taken: a card of fuelCardNumbers is assigned to another asset (cardNumbers lists them)',
            ),
          },
        },
      },
      (req) => assets.update(contextOf(req), req.params.id, req.body),
    );
  };
