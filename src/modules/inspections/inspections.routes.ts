import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  CreateInspectionBody,
  CreateInspectionResponse,
  InspectionDetailResponse,
  InspectionSummaryQuery,
  InspectionSummaryResponse,
  ListInspectionsQuery,
  ListInspectionsResponse,
  ReviewConflictResponse,
  ReviewInspectionBody,
  ReviewInspectionResponse,
} from './inspections.schemas.ts';

export const inspectionRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const inspections = services.inspections;
    const tags = ['inspections'];

    app.post(
      '/inspections',
      {
        config: { scope: 'inspections:write' },
        schema: {
          operationId: 'createInspection',
          tags,
          summary: 'Submit an inspection: failed items open flags, a meter item logs a reading',
          description:
            'Validation errors are keyed `results.<itemKey>`. A critical failure may take the asset out of service.',
          body: CreateInspectionBody,
          response: {
            201: CreateInspectionResponse,
            409: ErrorResponse.describe(
              'inspection_form_archived: the form is archived; or asset_unavailable: the asset is SOLD or ARCHIVED',
            ),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await inspections.submit(contextOf(req), req.body)),
    );

    app.get(
      '/inspections',
      {
        config: { scope: 'inspections:read' },
        schema: {
          operationId: 'listInspections',
          tags,
          summary: 'List inspections, newest inspectedAt first',
          querystring: ListInspectionsQuery,
          response: { 200: ListInspectionsResponse },
        },
      },
      (req) => inspections.list(contextOf(req), req.query),
    );

    app.get(
      '/inspections/summary',
      {
        config: { scope: 'inspections:read' },
        schema: {
          operationId: 'getInspectionSummary',
          tags,
          summary: "Fleet view: each asset's last inspection, open defects, and whether it skipped its inspection",
          querystring: InspectionSummaryQuery,
          response: { 200: InspectionSummaryResponse },
        },
      },
      (req) => inspections.summary(contextOf(req), req.query),
    );

    app.get(
      '/inspections/:id',
      {
        config: { scope: 'inspections:read' },
        schema: {
          operationId: 'getInspection',
          tags,
          summary: 'An inspection with its form version items, results, flags and attachments',
          params: IdParams,
          response: { 200: InspectionDetailResponse },
        },
      },
      (req) => inspections.get(contextOf(req), req.params.id),
    );

    app.post(
      '/inspections/:id/review',
      {
        config: { scope: 'inspections:write' },
        schema: {
          operationId: 'reviewInspection',
          tags,
          summary: "The mechanic's review: defects corrected, or no correction needed",
          params: IdParams,
          body: ReviewInspectionBody,
          response: {
            200: ReviewInspectionResponse,
            409: ReviewConflictResponse.describe(
              'inspection_already_reviewed: a review is final; or inspection_defects_open: flags of the inspection are still open',
            ),
          },
        },
      },
      (req) => inspections.review(contextOf(req), req.params.id, req.body),
    );
  };
