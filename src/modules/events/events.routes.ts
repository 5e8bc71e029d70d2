import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import { EventDetailResponse, ListEventsQuery, ListEventsResponse } from './events.schemas.ts';

export const eventRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const events = services.events;
    const tags = ['events'];

    app.get(
      '/events',
      {
        config: { scope: 'events:read' },
        schema: {
          operationId: 'listEvents',
          tags,
          summary: 'The event feed: every event of the organisation, newest first (the webhooks’ envelopes)',
          querystring: ListEventsQuery,
          response: { 200: ListEventsResponse },
        },
      },
      (req) => events.list(contextOf(req), req.query),
    );

    app.get(
      '/events/:id',
      {
        config: { scope: 'events:read' },
        schema: {
          operationId: 'getEvent',
          tags,
          summary: 'One event of the feed',
          params: IdParams,
          response: { 200: EventDetailResponse },
        },
      },
      (req) => events.get(contextOf(req), req.params.id),
    );
  };
