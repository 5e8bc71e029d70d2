import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { batchRoute } from '../../core/batch.ts';
import { HOURS_BATCH_CAP } from './hours.service.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateHoursBody,
  HoursBatchResponse,
  HoursCreatedResponse,
  HoursDetailResponse,
  HoursReviewResponse,
  IdempotencyHeaders,
  ListHoursQuery,
  ListHoursResponse,
  ReviewHoursBody,
} from './hours.schemas.ts';

export const hoursRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const batch = batchRoute(CreateHoursBody, HOURS_BATCH_CAP);
    const hours = services.hours;
    const tags = ['hours'];

    app.get(
      '/hours',
      {
        config: { scope: 'hours:read' },
        schema: {
          operationId: 'listHours',
          tags,
          summary: 'List meter logs, newest first (by loggedAt)',
          querystring: ListHoursQuery,
          response: { 200: ListHoursResponse },
        },
      },
      (req) => hours.list(contextOf(req), req.query),
    );

    app.post(
      '/hours',
      {
        // The seed's own Idempotency-Key semantics (per organisation, original logId, replayed: true).
        config: { scope: 'hours:write', idempotency: 'own' },
        schema: {
          operationId: 'createHoursLog',
          tags,
          summary: 'Log a meter reading or a state-only entry (idempotent with Idempotency-Key or clientMutationId)',
          headers: IdempotencyHeaders,
          body: CreateHoursBody,
          response: { 201: HoursCreatedResponse },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await hours.create(contextOf(req), req.body, req.headers['idempotency-key'])),
    );

    app.post(
      '/hours/batch',
      {
        config: { scope: 'hours:write' },
        schema: {
          operationId: 'createHoursBatch',
          tags,
          summary: 'Log up to 100 readings; each entry succeeds or fails on its own (clientMutationId per entry)',
          body: batch.body,
          response: { 200: HoursBatchResponse },
        },
        validatorCompiler: batch.validatorCompiler,
      },
      (req) => hours.createBatch(contextOf(req), req.body),
    );

    app.get(
      '/hours/:id',
      {
        config: { scope: 'hours:read' },
        schema: {
          operationId: 'getHoursLog',
          tags,
          summary: 'Meter log detail',
          params: IdParams,
          response: { 200: HoursDetailResponse },
        },
      },
      (req) => hours.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/hours/:id',
      {
        config: { scope: 'hours:write' },
        schema: {
          operationId: 'reviewHoursLog',
          tags,
          summary: 'Approve or reject a meter log awaiting review',
          params: IdParams,
          body: ReviewHoursBody,
          response: {
            200: HoursReviewResponse,
            409: ErrorResponse.describe('The log is not awaiting review (not_pending_review)'),
          },
        },
      },
      (req) => hours.review(contextOf(req), req.params.id, req.body.reviewStatus),
    );
  };
