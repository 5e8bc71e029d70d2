import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  ArchiveInspectionFormResponse,
  CreateInspectionFormBody,
  GetInspectionFormQuery,
  InspectionFormDetailResponse,
  InspectionFormVersionResponse,
  ListInspectionFormsQuery,
  ListInspectionFormsResponse,
  ListInspectionTemplatesResponse,
  UpdateInspectionFormBody,
} from './inspection-forms.schemas.ts';

const ARCHIVED = 'inspection_form_archived: the form is archived';

export const inspectionFormRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const forms = services.inspectionForms;
    const tags = ['inspections'];

    app.get(
      '/inspection-form-templates',
      {
        config: { scope: 'inspections:read' },
        schema: {
          operationId: 'listInspectionFormTemplates',
          tags,
          summary: 'Built-in inspection forms (a 49 CFR 396.11 pre-trip DVIR, a daily walk-around) to copy',
          response: { 200: ListInspectionTemplatesResponse },
        },
      },
      () => forms.templates(),
    );

    app.get(
      '/inspection-forms',
      {
        config: { scope: 'inspections:read' },
        schema: {
          operationId: 'listInspectionForms',
          tags,
          summary: 'List inspection forms, newest first (active ones by default)',
          querystring: ListInspectionFormsQuery,
          response: { 200: ListInspectionFormsResponse },
        },
      },
      (req) => forms.list(contextOf(req), req.query),
    );

    app.post(
      '/inspection-forms',
      {
        config: { scope: 'inspections:write' },
        schema: {
          operationId: 'createInspectionForm',
          tags,
          summary: 'Create an inspection form (version 1), or copy a built-in template with {template}',
          body: CreateInspectionFormBody,
          response: { 201: InspectionFormVersionResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await forms.create(contextOf(req), req.body)),
    );

    app.get(
      '/inspection-forms/:id',
      {
        config: { scope: 'inspections:read' },
        schema: {
          operationId: 'getInspectionForm',
          tags,
          summary: 'An inspection form with the items of its current version (or of ?version=N)',
          params: IdParams,
          querystring: GetInspectionFormQuery,
          response: { 200: InspectionFormDetailResponse },
        },
      },
      (req) => forms.get(contextOf(req), req.params.id, req.query.version),
    );

    app.patch(
      '/inspection-forms/:id',
      {
        config: { scope: 'inspections:write' },
        schema: {
          operationId: 'updateInspectionForm',
          tags,
          summary: 'Update an inspection form; changed items create the next version',
          params: IdParams,
          body: UpdateInspectionFormBody,
          response: { 200: InspectionFormVersionResponse, 409: ErrorResponse.describe(ARCHIVED) },
        },
      },
      (req) => forms.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/inspection-forms/:id',
      {
        config: { scope: 'inspections:write' },
        schema: {
          operationId: 'archiveInspectionForm',
          tags,
          summary: 'Archive an inspection form: no new submissions; past ones keep it',
          params: IdParams,
          response: { 200: ArchiveInspectionFormResponse },
        },
      },
      (req) => forms.archive(contextOf(req), req.params.id),
    );
  };
