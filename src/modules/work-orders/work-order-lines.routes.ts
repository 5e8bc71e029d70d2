import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  AddLaborLineBody,
  AddPartLineBody,
  LaborLineResponse,
  LineDeletedResponse,
  LineParams,
  PartLineResponse,
} from './work-order-lines.schemas.ts';

const CLOSED = 'work_order_closed: the work order is DONE or CANCELED';

export const workOrderLineRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const lines = services.workOrderLines;
    const tags = ['work-orders'];
    const write = { scope: 'workorders:write' as const };

    app.post(
      '/work-orders/:id/parts',
      {
        config: write,
        schema: {
          operationId: 'addWorkOrderPart',
          tags,
          summary: 'Issue a part to a work order from a yard, costed by the cost method and frozen on the line',
          params: IdParams,
          body: AddPartLineBody,
          response: {
            201: PartLineResponse,
            409: ErrorResponse.describe(`insufficient_stock: the yard holds less; ${CLOSED}`),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await lines.addPart(contextOf(req), req.params.id, req.body)),
    );

    app.delete(
      '/work-orders/:id/parts/:lineId',
      {
        config: write,
        schema: {
          operationId: 'removeWorkOrderPart',
          tags,
          summary: "Remove a part line: its quantity returns to its yard at the line's cost",
          params: LineParams,
          response: { 200: LineDeletedResponse, 409: ErrorResponse.describe(CLOSED) },
        },
      },
      (req) => lines.removePart(contextOf(req), req.params.id, req.params.lineId),
    );

    app.post(
      '/work-orders/:id/labor',
      {
        config: write,
        schema: {
          operationId: 'addWorkOrderLabor',
          tags,
          summary: 'Add a labour line: hours x rate, half-up to the cent',
          params: IdParams,
          body: AddLaborLineBody,
          response: { 201: LaborLineResponse, 409: ErrorResponse.describe(CLOSED) },
        },
      },
      async (req, reply) => reply.code(201).send(await lines.addLabor(contextOf(req), req.params.id, req.body)),
    );

    app.delete(
      '/work-orders/:id/labor/:lineId',
      {
        config: write,
        schema: {
          operationId: 'removeWorkOrderLabor',
          tags,
          summary: 'Remove a labour line',
          params: LineParams,
          response: { 200: LineDeletedResponse, 409: ErrorResponse.describe(CLOSED) },
        },
      },
      (req) => lines.removeLabor(contextOf(req), req.params.id, req.params.lineId),
    );
  };
