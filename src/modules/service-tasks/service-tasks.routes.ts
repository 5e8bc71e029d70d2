import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import {
  CreateServiceTaskBody,
  ListServiceTasksQuery,
  ListServiceTasksResponse,
  ServiceTaskDetailResponse,
  ServiceTaskIdResponse,
  UpdateServiceTaskBody,
} from './service-tasks.schemas.ts';

export const serviceTaskRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const tasks = services.serviceTasks;
    const tags = ['service-tasks'];
    const read = { scope: 'workorders:read' as const };
    const write = { scope: 'workorders:write' as const };

    app.get(
      '/service-tasks',
      {
        config: read,
        schema: {
          operationId: 'listServiceTasks',
          tags,
          summary: "List the organisation's service tasks by name",
          querystring: ListServiceTasksQuery,
          response: { 200: ListServiceTasksResponse },
        },
      },
      (req) => tasks.list(contextOf(req), req.query),
    );

    app.post(
      '/service-tasks',
      {
        config: write,
        schema: {
          operationId: 'createServiceTask',
          tags,
          summary: 'Add a service to the catalogue',
          body: CreateServiceTaskBody,
          response: { 201: ServiceTaskIdResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await tasks.create(contextOf(req), req.body)),
    );

    app.get(
      '/service-tasks/:id',
      {
        config: read,
        schema: {
          operationId: 'getServiceTask',
          tags,
          summary: 'Service task detail with how many reminders and program items use it',
          params: IdParams,
          response: { 200: ServiceTaskDetailResponse },
        },
      },
      (req) => tasks.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/service-tasks/:id',
      {
        config: write,
        schema: {
          operationId: 'updateServiceTask',
          tags,
          summary: 'Rename or describe a service task (reminders show the new name)',
          params: IdParams,
          body: UpdateServiceTaskBody,
          response: { 200: ServiceTaskIdResponse },
        },
      },
      (req) => tasks.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/service-tasks/:id',
      {
        config: write,
        schema: {
          operationId: 'deleteServiceTask',
          tags,
          summary: 'Delete an unused service task (409 service_task_in_use while reminders or programs name it)',
          params: IdParams,
          response: {
            200: ServiceTaskIdResponse,
            409: z
              .object({
                ok: z.literal(false),
                error: z.string(),
                message: z.string(),
                reminderCount: z.number().int(),
                programItemCount: z.number().int(),
              })
              .describe('service_task_in_use: reminders or program items still name the task'),
          },
        },
      },
      (req) => tasks.remove(contextOf(req), req.params.id),
    );
  };
