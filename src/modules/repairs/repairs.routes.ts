import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateRepairBody,
  ListRepairsQuery,
  ListRepairsResponse,
  RepairDetailResponse,
  RepairIdResponse,
} from './repairs.schemas.ts';

export const repairRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const repairs = services.repairs;
    const tags = ['repairs'];

    app.get(
      '/repairs',
      {
        config: { scope: 'workorders:read' },
        schema: {
          operationId: 'listRepairs',
          tags,
          summary: 'List repairs, newest first (rows omit meta)',
          querystring: ListRepairsQuery,
          response: { 200: ListRepairsResponse },
        },
      },
      (req) => repairs.list(contextOf(req), req.query),
    );

    app.post(
      '/repairs',
      {
        config: { scope: 'workorders:write' },
        schema: {
          operationId: 'createRepair',
          tags,
          summary: 'Log a repair; with workOrderId the work order becomes DONE',
          description:
            "A cost-anomaly check runs in the background when the repair has an asset and a positive cost; its verdict appears in the detail's meta.costAnomaly.",
          body: CreateRepairBody,
          response: {
            201: RepairIdResponse,
            409: ErrorResponse.describe('work_order_canceled: re-open the work order first'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await repairs.create(contextOf(req), req.body)),
    );

    app.get(
      '/repairs/:id',
      {
        config: { scope: 'workorders:read' },
        schema: {
          operationId: 'getRepair',
          tags,
          summary: 'Repair detail with its meta blob',
          params: IdParams,
          response: { 200: RepairDetailResponse },
        },
      },
      (req) => repairs.get(contextOf(req), req.params.id),
    );
  };
