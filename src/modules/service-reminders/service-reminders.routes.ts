import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CompleteReminderBody,
  CreateReminderBody,
  HistoryQuery,
  HistoryResponse,
  ListRemindersQuery,
  ListRemindersResponse,
  ReminderCompletedResponse,
  ReminderCreatedResponse,
  ReminderDeletedResponse,
  ReminderDetailResponse,
  ReminderIdResponse,
  SnoozeReminderBody,
  UpdateReminderBody,
} from './service-reminders.schemas.ts';

export const serviceReminderRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const reminders = services.serviceReminders;
    const tags = ['service-reminders'];
    const read = { scope: 'workorders:read' as const };
    const write = { scope: 'workorders:write' as const };

    app.get(
      '/service-reminders',
      {
        config: read,
        schema: {
          operationId: 'listServiceReminders',
          tags,
          summary: 'List service reminders, most urgent first: OVERDUE, DUE_SOON, then the rest; soonest due first',
          querystring: ListRemindersQuery,
          response: { 200: ListRemindersResponse },
        },
      },
      (req) => reminders.list(contextOf(req), req.query),
    );

    app.post(
      '/service-reminders',
      {
        config: write,
        schema: {
          operationId: 'createServiceReminder',
          tags,
          summary: 'Schedule a service task on an asset by meter, by calendar, or whichever comes first',
          body: CreateReminderBody,
          response: {
            201: ReminderCreatedResponse,
            404: ErrorResponse.describe('The asset or service task is not in this organisation (fieldErrors names it)'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await reminders.create(contextOf(req), req.body)),
    );

    app.get(
      '/service-reminders/:id',
      {
        config: read,
        schema: {
          operationId: 'getServiceReminder',
          tags,
          summary: 'Service reminder detail with its forecast and last completion',
          params: IdParams,
          response: { 200: ReminderDetailResponse },
        },
      },
      (req) => reminders.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/service-reminders/:id',
      {
        config: write,
        schema: {
          operationId: 'updateServiceReminder',
          tags,
          summary: 'Change the task or the schedule of a reminder; its status is re-evaluated at once',
          params: IdParams,
          body: UpdateReminderBody,
          response: { 200: ReminderIdResponse },
        },
      },
      (req) => reminders.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/service-reminders/:id',
      {
        config: write,
        schema: {
          operationId: 'deleteServiceReminder',
          tags,
          summary: 'Delete a reminder and its service history',
          params: IdParams,
          response: { 200: ReminderDeletedResponse },
        },
      },
      (req) => reminders.remove(contextOf(req), req.params.id),
    );

    app.post(
      '/service-reminders/:id/complete',
      {
        config: write,
        schema: {
          operationId: 'completeServiceReminder',
          tags,
          summary: 'Record a service: a history entry, and the next due counted from this completion',
          params: IdParams,
          body: CompleteReminderBody,
          response: { 201: ReminderCompletedResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await reminders.complete(contextOf(req), req.params.id, req.body)),
    );

    app.post(
      '/service-reminders/:id/snooze',
      {
        config: write,
        schema: {
          operationId: 'snoozeServiceReminder',
          tags,
          summary: 'Snooze a reminder until a date, a meter reading, or whichever comes first',
          params: IdParams,
          body: SnoozeReminderBody,
          response: { 200: ReminderIdResponse },
        },
      },
      (req) => reminders.snooze(contextOf(req), req.params.id, req.body),
    );

    app.get(
      '/service-reminders/:id/history',
      {
        config: read,
        schema: {
          operationId: 'listServiceReminderHistory',
          tags,
          summary: 'Service history of a reminder (its completions), newest first',
          params: IdParams,
          querystring: HistoryQuery,
          response: { 200: HistoryResponse },
        },
      },
      (req) => reminders.history(contextOf(req), req.params.id, req.query),
    );
  };
