import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { batchRoute } from '../../core/batch.ts';
import { YARD_BATCH_CAP } from './yards.service.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateYardBody,
  CreateYardResponse,
  DeleteYardResponse,
  ListYardsQuery,
  ListYardsResponse,
  UpdateYardBody,
  YardBatchResponse,
  YardDetailResponse,
  YardIdResponse,
} from './yards.schemas.ts';

export const yardRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const batch = batchRoute(CreateYardBody, YARD_BATCH_CAP);
    const yards = services.yards;
    const tags = ['yards'];

    app.get(
      '/yards',
      {
        config: { scope: 'yards:read' },
        schema: {
          operationId: 'listYards',
          tags,
          summary: 'List yards by name',
          querystring: ListYardsQuery,
          response: { 200: ListYardsResponse },
        },
      },
      (req) => yards.list(contextOf(req), req.query),
    );

    app.post(
      '/yards',
      {
        config: { scope: 'yards:write' },
        schema: {
          operationId: 'createYard',
          tags,
          summary: 'Create a yard (422 for a name already used in the organisation)',
          body: CreateYardBody,
          response: { 201: CreateYardResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await yards.create(contextOf(req), req.body)),
    );

    app.post(
      '/yards/batch',
      {
        config: { scope: 'yards:write' },
        schema: {
          operationId: 'createYardsBatch',
          tags,
          summary: 'Create up to 50 yards; each entry succeeds or fails on its own',
          body: batch.body,
          response: { 200: YardBatchResponse },
        },
        validatorCompiler: batch.validatorCompiler,
      },
      (req) => yards.createBatch(contextOf(req), req.body),
    );

    app.get(
      '/yards/:id',
      {
        config: { scope: 'yards:read' },
        schema: {
          operationId: 'getYard',
          tags,
          summary: 'Yard detail with asset and tool counts',
          params: IdParams,
          response: { 200: YardDetailResponse },
        },
      },
      (req) => yards.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/yards/:id',
      {
        config: { scope: 'yards:write' },
        schema: {
          operationId: 'updateYard',
          tags,
          summary: 'Update a yard',
          params: IdParams,
          body: UpdateYardBody,
          response: { 200: YardIdResponse },
        },
      },
      (req) => yards.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/yards/:id',
      {
        config: { scope: 'yards:write' },
        schema: {
          operationId: 'deleteYard',
          tags,
          summary: 'Delete a yard; its assets and tools are unassigned, not deleted',
          params: IdParams,
          response: {
            200: DeleteYardResponse,
            409: ErrorResponse.describe('yard_has_stock: the yard holds stock of a part'),
          },
        },
      },
      (req) => yards.remove(contextOf(req), req.params.id),
    );
  };
