import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateFlagBody,
  FlagDetailResponse,
  FlagIdResponse,
  FlagResolvedResponse,
  ListFlagsQuery,
  ListFlagsResponse,
  UpdateFlagBody,
} from './flags.schemas.ts';

export const flagRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const flags = services.flags;
    const tags = ['flags'];

    app.get(
      '/flags',
      {
        config: { scope: 'flags:read' },
        schema: {
          operationId: 'listFlags',
          tags,
          summary: 'List flags, newest first (default: OPEN flags of every severity)',
          querystring: ListFlagsQuery,
          response: { 200: ListFlagsResponse },
        },
      },
      (req) => flags.list(contextOf(req), req.query),
    );

    app.post(
      '/flags',
      {
        config: { scope: 'flags:write' },
        schema: {
          operationId: 'createFlag',
          tags,
          summary: 'Raise a YELLOW or RED flag on an asset (push and email notifications follow)',
          body: CreateFlagBody,
          response: { 201: FlagIdResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await flags.create(contextOf(req), req.body)),
    );

    app.get(
      '/flags/:id',
      {
        config: { scope: 'flags:read' },
        schema: {
          operationId: 'getFlag',
          tags,
          summary: 'Flag detail',
          params: IdParams,
          response: { 200: FlagDetailResponse },
        },
      },
      (req) => flags.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/flags/:id',
      {
        config: { scope: 'flags:write' },
        schema: {
          operationId: 'resolveFlag',
          tags,
          summary:
            'Resolve a flag (status RESOLVED only; RED needs a specific resolutionNote and returnToServiceConfirmed)',
          params: IdParams,
          body: UpdateFlagBody,
          response: {
            200: FlagResolvedResponse,
            409: ErrorResponse.describe('The flag is already resolved (flag_already_resolved)'),
          },
        },
      },
      (req) => flags.update(contextOf(req), req.params.id, req.body),
    );
  };
