import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateWorkOrderBody,
  ListWorkOrdersQuery,
  ListWorkOrdersResponse,
  UpdateWorkOrderBody,
  WorkOrderCreatedResponse,
  WorkOrderDetailResponse,
  WorkOrderIdResponse,
} from './work-orders.schemas.ts';

export const workOrderRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const workOrders = services.workOrders;
    const tags = ['work-orders'];

    app.get(
      '/work-orders',
      {
        config: { scope: 'workorders:read' },
        schema: {
          operationId: 'listWorkOrders',
          tags,
          summary:
            'List work orders: the active queue by default, sorted priority desc, due asc (undated last), created desc',
          querystring: ListWorkOrdersQuery,
          response: { 200: ListWorkOrdersResponse },
        },
      },
      (req) => workOrders.list(contextOf(req), req.query),
    );

    app.post(
      '/work-orders',
      {
        config: { scope: 'workorders:write' },
        schema: {
          operationId: 'createWorkOrder',
          tags,
          summary: 'Create a work order; its number is allocated per organisation',
          body: CreateWorkOrderBody,
          response: { 201: WorkOrderCreatedResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await workOrders.create(contextOf(req), req.body)),
    );

    app.get(
      '/work-orders/:id',
      {
        config: { scope: 'workorders:read' },
        schema: {
          operationId: 'getWorkOrder',
          tags,
          summary: 'Work order detail',
          params: IdParams,
          response: { 200: WorkOrderDetailResponse },
        },
      },
      (req) => workOrders.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/work-orders/:id',
      {
        config: { scope: 'workorders:write' },
        schema: {
          operationId: 'updateWorkOrder',
          tags,
          summary: 'Update a work order; unknown status or priority values are ignored',
          description:
            'DONE is terminal; CANCELED may be re-opened into an active status. Other moves answer 409 invalid_status_transition.',
          params: IdParams,
          body: UpdateWorkOrderBody,
          response: {
            200: WorkOrderIdResponse,
            409: ErrorResponse.describe('invalid_status_transition: the status move is not allowed'),
          },
        },
      },
      (req) => workOrders.update(contextOf(req), req.params.id, req.body),
    );
  };
