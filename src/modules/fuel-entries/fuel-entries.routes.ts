import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import {
  CreateFuelEntryBody,
  FuelEntryDeletedResponse,
  FuelEntryDetailResponse,
  FuelEntryWrittenResponse,
  ListFuelEntriesQuery,
  ListFuelEntriesResponse,
  UpdateFuelEntryBody,
} from './fuel-entries.schemas.ts';

export const fuelEntryRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const fuel = services.fuelEntries;
    const tags = ['fuel'];

    app.get(
      '/fuel-entries',
      {
        config: { scope: 'fuel:read' },
        schema: {
          operationId: 'listFuelEntries',
          tags,
          summary: 'List fuel entries, newest first (by fueledAt)',
          querystring: ListFuelEntriesQuery,
          response: { 200: ListFuelEntriesResponse },
        },
      },
      (req) => fuel.list(contextOf(req), req.query),
    );

    app.post(
      '/fuel-entries',
      {
        config: { scope: 'fuel:write' },
        schema: {
          operationId: 'createFuelEntry',
          tags,
          summary: 'Record a fill (201), or update the fill with this externalId (200: a fuel card settles later)',
          body: CreateFuelEntryBody,
          response: {
            201: FuelEntryWrittenResponse,
            200: FuelEntryWrittenResponse,
          },
        },
      },
      async (req, reply) => {
        const { status, body } = await fuel.create(contextOf(req), req.body);
        return reply.code(status).send(body);
      },
    );

    app.get(
      '/fuel-entries/:id',
      {
        config: { scope: 'fuel:read' },
        schema: {
          operationId: 'getFuelEntry',
          tags,
          summary: 'Fuel entry detail',
          params: IdParams,
          response: { 200: FuelEntryDetailResponse },
        },
      },
      (req) => fuel.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/fuel-entries/:id',
      {
        config: { scope: 'fuel:write' },
        schema: {
          operationId: 'updateFuelEntry',
          tags,
          summary: 'Change a fill: settle its price, void it, mark it partial, tag a project',
          params: IdParams,
          body: UpdateFuelEntryBody,
          response: { 200: FuelEntryWrittenResponse },
        },
      },
      (req) => fuel.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/fuel-entries/:id',
      {
        config: { scope: 'fuel:write' },
        schema: {
          operationId: 'deleteFuelEntry',
          tags,
          summary: 'Delete a fill (its meter reading stays in the meter history)',
          params: IdParams,
          response: { 200: FuelEntryDeletedResponse },
        },
      },
      (req) => fuel.remove(contextOf(req), req.params.id),
    );
  };
