import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import {
  AssetTelematicsResponse,
  ConnectionResponse,
  CreateConnectionBody,
  CreateConnectionResponse,
  DeleteConnectionResponse,
  EquipmentParams,
  EquipmentQuery,
  EquipmentResponse,
  LinkEquipmentBody,
  ListConnectionsResponse,
  ListEquipmentResponse,
  ListQuery,
  ListRunsResponse,
  SyncResponse,
  UpdateConnectionBody,
} from './telematics.schemas.ts';

export const telematicsRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const telematics = services.telematics;
    const tags = ['telematics'];
    const base = '/telematics/connections';

    app.post(
      base,
      {
        config: { scope: 'telematics:write' },
        schema: {
          operationId: 'createTelematicsConnection',
          tags,
          summary: 'Connect an ISO 15143-3 (AEMP 2.0) feed; secrets are write-only',
          body: CreateConnectionBody,
          response: { 201: CreateConnectionResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await telematics.create(contextOf(req), req.body)),
    );

    app.get(
      base,
      {
        config: { scope: 'telematics:read' },
        schema: {
          operationId: 'listTelematicsConnections',
          tags,
          summary: 'List telematics connections, newest first',
          querystring: ListQuery,
          response: { 200: ListConnectionsResponse },
        },
      },
      (req) => telematics.list(contextOf(req), req.query),
    );

    app.get(
      `${base}/:id`,
      {
        config: { scope: 'telematics:read' },
        schema: {
          operationId: 'getTelematicsConnection',
          tags,
          summary: 'A telematics connection with its status and last run',
          params: IdParams,
          response: { 200: ConnectionResponse },
        },
      },
      (req) => telematics.get(contextOf(req), req.params.id),
    );

    app.patch(
      `${base}/:id`,
      {
        config: { scope: 'telematics:write' },
        schema: {
          operationId: 'updateTelematicsConnection',
          tags,
          summary: 'Update a telematics connection (auth is replaced as a whole)',
          params: IdParams,
          body: UpdateConnectionBody,
          response: { 200: ConnectionResponse },
        },
      },
      (req) => telematics.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      `${base}/:id`,
      {
        config: { scope: 'telematics:write' },
        schema: {
          operationId: 'deleteTelematicsConnection',
          tags,
          summary: 'Delete a connection with its runs and machines; readings and flags it created stay',
          params: IdParams,
          response: { 200: DeleteConnectionResponse },
        },
      },
      (req) => telematics.remove(contextOf(req), req.params.id),
    );

    app.post(
      `${base}/:id/sync`,
      {
        config: { scope: 'telematics:write' },
        schema: {
          operationId: 'syncTelematicsConnection',
          tags,
          summary: 'Run the connection now (202); answers the running run when one is running',
          params: IdParams,
          response: { 202: SyncResponse },
        },
      },
      async (req, reply) => reply.code(202).send(await telematics.sync(contextOf(req), req.params.id)),
    );

    app.get(
      `${base}/:id/runs`,
      {
        config: { scope: 'telematics:read' },
        schema: {
          operationId: 'listTelematicsRuns',
          tags,
          summary: "The connection's runs, newest first",
          params: IdParams,
          querystring: ListQuery,
          response: { 200: ListRunsResponse },
        },
      },
      (req) => telematics.runs(contextOf(req), req.params.id, req.query),
    );

    app.get(
      `${base}/:id/equipment`,
      {
        config: { scope: 'telematics:read' },
        schema: {
          operationId: 'listTelematicsEquipment',
          tags,
          summary: 'The machines the feed lists, by equipmentKey, with the asset each feeds',
          params: IdParams,
          querystring: EquipmentQuery,
          response: { 200: ListEquipmentResponse },
        },
      },
      (req) => telematics.equipment(contextOf(req), req.params.id, req.query),
    );

    app.put(
      `${base}/:id/equipment/:equipmentKey`,
      {
        config: { scope: 'telematics:write' },
        schema: {
          operationId: 'linkTelematicsEquipment',
          tags,
          summary: 'Link a machine to an asset (null unlinks; an asset is fed by one machine)',
          params: EquipmentParams,
          body: LinkEquipmentBody,
          response: { 200: EquipmentResponse },
        },
      },
      (req) => telematics.link(contextOf(req), req.params.id, req.params.equipmentKey, req.body.assetId),
    );

    app.get(
      '/assets/:id/telematics',
      {
        config: { scope: 'assets:read' },
        schema: {
          operationId: 'getAssetTelematics',
          tags: ['assets', 'telematics'],
          summary: "The asset's machine: position, meters, fuel, engine, nearest yard (404 without a machine)",
          params: IdParams,
          response: { 200: AssetTelematicsResponse },
        },
      },
      (req) => telematics.assetTelematics(contextOf(req), req.params.id),
    );
  };
