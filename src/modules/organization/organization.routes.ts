import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { OrganizationResponse, UpdateOrganizationBody } from './organization.schemas.ts';

export const organizationRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const organization = services.organization;
    const tags = ['organization'];

    app.get(
      '/organization',
      {
        config: { scope: null },
        schema: {
          operationId: 'getOrganization',
          tags,
          summary: "The key's organisation: its currency and inventory cost method",
          response: { 200: OrganizationResponse },
        },
      },
      (req) => organization.get(contextOf(req)),
    );

    app.patch(
      '/organization',
      {
        config: { scope: 'organization:write' },
        schema: {
          operationId: 'updateOrganization',
          tags,
          summary: 'Set the currency or the inventory cost method',
          body: UpdateOrganizationBody,
          response: { 200: OrganizationResponse },
        },
      },
      (req) => organization.update(contextOf(req), req.body),
    );
  };
