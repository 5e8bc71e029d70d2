import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreatePartBody,
  ListPartsQuery,
  ListPartsResponse,
  PartArchivedResponse,
  PartDetailResponse,
  PartIdResponse,
  UpdatePartBody,
} from './parts.schemas.ts';
import { AdjustmentBody, AdjustmentResponse, TransferBody, TransferResponse } from './part-inventory.schemas.ts';

export const partRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const parts = services.parts;
    const inventory = services.partInventory;
    const tags = ['parts'];
    const read = { scope: 'parts:read' as const };
    const write = { scope: 'parts:write' as const };

    app.get(
      '/parts',
      {
        config: read,
        schema: {
          operationId: 'listParts',
          tags,
          summary: 'List parts by number, with their stock totals',
          querystring: ListPartsQuery,
          response: { 200: ListPartsResponse },
        },
      },
      (req) => parts.list(contextOf(req), req.query),
    );

    app.post(
      '/parts',
      {
        config: write,
        schema: {
          operationId: 'createPart',
          tags,
          summary: 'Create a part',
          body: CreatePartBody,
          response: {
            201: PartIdResponse,
            409: ErrorResponse.describe('part_number_taken: another part has this number (any case)'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await parts.create(contextOf(req), req.body)),
    );

    app.get(
      '/parts/:id',
      {
        config: read,
        schema: {
          operationId: 'getPart',
          tags,
          summary: 'Part detail with its stock per yard',
          params: IdParams,
          response: { 200: PartDetailResponse },
        },
      },
      (req) => parts.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/parts/:id',
      {
        config: write,
        schema: {
          operationId: 'updatePart',
          tags,
          summary: 'Update a part (work-order lines already costed keep their cost)',
          params: IdParams,
          body: UpdatePartBody,
          response: {
            200: PartIdResponse,
            409: ErrorResponse.describe(
              'part_number_taken: another part has this number; part_has_stock: trackInventory cannot be switched off while a yard holds the part',
            ),
          },
        },
      },
      (req) => parts.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/parts/:id',
      {
        config: write,
        schema: {
          operationId: 'archivePart',
          tags,
          summary: 'Archive a part: hidden from the default list, still readable; its stock stays',
          params: IdParams,
          response: { 200: PartArchivedResponse },
        },
      },
      (req) => parts.archive(contextOf(req), req.params.id),
    );

    app.post(
      '/parts/:id/adjustments',
      {
        config: write,
        schema: {
          operationId: 'adjustPartStock',
          tags,
          summary: 'Change the stock of a part in a yard, or record a count',
          params: IdParams,
          body: AdjustmentBody,
          response: {
            201: AdjustmentResponse,
            409: ErrorResponse.describe(
              'insufficient_stock: the change would take the stock below zero; inventory_not_tracked: the part keeps no stock',
            ),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await inventory.adjust(contextOf(req), req.params.id, req.body)),
    );

    app.post(
      '/parts/:id/transfers',
      {
        config: write,
        schema: {
          operationId: 'transferPartStock',
          tags,
          summary: 'Move stock of a part between two yards, with its cost',
          params: IdParams,
          body: TransferBody,
          response: {
            201: TransferResponse,
            409: ErrorResponse.describe(
              'insufficient_stock: the source yard holds less; inventory_not_tracked: the part keeps no stock',
            ),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await inventory.transfer(contextOf(req), req.params.id, req.body)),
    );
  };
