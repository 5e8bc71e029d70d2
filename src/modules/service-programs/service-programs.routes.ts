import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  ApplyProgramBody,
  ApplyProgramResponse,
  CreateProgramBody,
  ListProgramsQuery,
  ListProgramsResponse,
  ProgramDetailResponse,
  ProgramIdResponse,
  RemoveAssetParams,
  RemoveAssetQuery,
  RemoveAssetResponse,
  UpdateProgramBody,
} from './service-programs.schemas.ts';

export const serviceProgramRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const programs = services.servicePrograms;
    const tags = ['service-programs'];
    const read = { scope: 'workorders:read' as const };
    const write = { scope: 'workorders:write' as const };

    app.get(
      '/service-programs',
      {
        config: read,
        schema: {
          operationId: 'listServicePrograms',
          tags,
          summary: 'List service programs, oldest first',
          querystring: ListProgramsQuery,
          response: { 200: ListProgramsResponse },
        },
      },
      (req) => programs.list(contextOf(req), req.query),
    );

    app.post(
      '/service-programs',
      {
        config: write,
        schema: {
          operationId: 'createServiceProgram',
          tags,
          summary: 'Create a service program: a set of service schedules to apply to many assets',
          body: CreateProgramBody,
          response: {
            201: ProgramIdResponse,
            404: ErrorResponse.describe('A service task of the items is not in this organisation'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await programs.create(contextOf(req), req.body)),
    );

    app.get(
      '/service-programs/:id',
      {
        config: read,
        schema: {
          operationId: 'getServiceProgram',
          tags,
          summary: 'Service program detail with its items and how many assets it is applied to',
          params: IdParams,
          response: { 200: ProgramDetailResponse },
        },
      },
      (req) => programs.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/service-programs/:id',
      {
        config: write,
        schema: {
          operationId: 'updateServiceProgram',
          tags,
          summary: 'Change a program; changed items update their reminders on every asset',
          params: IdParams,
          body: UpdateProgramBody,
          response: { 200: ProgramIdResponse },
        },
      },
      (req) => programs.update(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/service-programs/:id/assets',
      {
        config: write,
        schema: {
          operationId: 'applyServiceProgram',
          tags,
          summary: 'Apply a program to up to 1,000 assets: one reminder per item per asset, with a summary',
          params: IdParams,
          body: ApplyProgramBody,
          response: { 200: ApplyProgramResponse },
        },
      },
      (req) => programs.applyToAssets(contextOf(req), req.params.id, req.body.assetIds),
    );

    app.delete(
      '/service-programs/:id/assets/:assetId',
      {
        config: write,
        schema: {
          operationId: 'removeServiceProgramAsset',
          tags,
          summary:
            "Remove a program from an asset: the asset's reminders of the program are deleted (or kept detached)",
          params: RemoveAssetParams,
          querystring: RemoveAssetQuery,
          response: { 200: RemoveAssetResponse },
        },
      },
      (req) => programs.removeFromAsset(contextOf(req), req.params.id, req.params.assetId, req.query.keepReminders),
    );
  };
