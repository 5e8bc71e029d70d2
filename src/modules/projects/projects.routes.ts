import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { batchRoute } from '../../core/batch.ts';
// Loaded before the service: the contract lists the schemas in the order their modules load.
import { EquipmentUsageQuery, EquipmentUsageResponse } from './project-usage.schemas.ts';
import { PROJECT_BATCH_CAP } from './projects.service.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import {
  CreateProjectBody,
  ListProjectsQuery,
  ListProjectsResponse,
  ProjectBatchResponse,
  ProjectDetailResponse,
  ProjectIdResponse,
  UpdateProjectBody,
} from './projects.schemas.ts';

export const projectRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const batch = batchRoute(CreateProjectBody, PROJECT_BATCH_CAP);
    const projects = services.projects;
    const tags = ['projects'];

    app.get(
      '/projects',
      {
        config: { scope: 'projects:read' },
        schema: {
          operationId: 'listProjects',
          tags,
          summary: 'List projects, newest first (default status ACTIVE)',
          querystring: ListProjectsQuery,
          response: { 200: ListProjectsResponse },
        },
      },
      (req) => projects.list(contextOf(req), req.query),
    );

    app.post(
      '/projects',
      {
        config: { scope: 'projects:write' },
        schema: {
          operationId: 'createProject',
          tags,
          summary: 'Create a project (422 for a duplicate code)',
          body: CreateProjectBody,
          response: { 201: ProjectIdResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await projects.create(contextOf(req), req.body)),
    );

    app.post(
      '/projects/batch',
      {
        config: { scope: 'projects:write' },
        schema: {
          operationId: 'createProjectsBatch',
          tags,
          summary: 'Create up to 50 projects; each entry succeeds or fails on its own',
          body: batch.body,
          response: { 200: ProjectBatchResponse },
        },
        validatorCompiler: batch.validatorCompiler,
      },
      (req) => projects.createBatch(contextOf(req), req.body),
    );

    app.get(
      '/projects/:id',
      {
        config: { scope: 'projects:read' },
        schema: {
          operationId: 'getProject',
          tags,
          summary: 'Project detail',
          params: IdParams,
          response: { 200: ProjectDetailResponse },
        },
      },
      (req) => projects.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/projects/:id',
      {
        config: { scope: 'projects:write' },
        schema: {
          operationId: 'updateProject',
          tags,
          summary: 'Update a project (400 duplicate_code when the code belongs to another project)',
          params: IdParams,
          body: UpdateProjectBody,
          response: { 200: ProjectIdResponse },
        },
      },
      (req) => projects.update(contextOf(req), req.params.id, req.body),
    );

    app.get(
      '/projects/:id/equipment-usage',
      {
        config: { scope: 'projects:read' },
        schema: {
          operationId: 'getProjectEquipmentUsage',
          tags,
          summary: 'Hours, repair cost and revenue estimate of the equipment used on a project',
          params: IdParams,
          querystring: EquipmentUsageQuery,
          response: { 200: EquipmentUsageResponse },
        },
      },
      (req) => projects.equipmentUsage(contextOf(req), req.params.id, req.query),
    );
  };
