import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import {
  ArchiveVendorResponse,
  CreateVendorBody,
  CreateVendorResponse,
  ListVendorsQuery,
  ListVendorsResponse,
  UpdateVendorBody,
  VendorDetailResponse,
  VendorIdResponse,
} from './vendors.schemas.ts';

export const vendorRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const vendors = services.vendors;
    const tags = ['vendors'];

    app.get(
      '/vendors',
      {
        config: { scope: 'purchasing:read' },
        schema: {
          operationId: 'listVendors',
          tags,
          summary: 'List vendors by name (archived ones with archived=true)',
          querystring: ListVendorsQuery,
          response: { 200: ListVendorsResponse },
        },
      },
      (req) => vendors.list(contextOf(req), req.query),
    );

    app.post(
      '/vendors',
      {
        config: { scope: 'purchasing:write' },
        schema: {
          operationId: 'createVendor',
          tags,
          summary: 'Create a vendor (409 vendor_name_taken for a name in use, ignoring case)',
          body: CreateVendorBody,
          response: {
            201: CreateVendorResponse,
            409: ErrorResponse.describe('vendor_name_taken: another vendor in use has this name'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await vendors.create(contextOf(req), req.body)),
    );

    app.get(
      '/vendors/:id',
      {
        config: { scope: 'purchasing:read' },
        schema: {
          operationId: 'getVendor',
          tags,
          summary: 'Vendor detail (archived vendors too)',
          params: IdParams,
          response: { 200: VendorDetailResponse },
        },
      },
      (req) => vendors.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/vendors/:id',
      {
        config: { scope: 'purchasing:write' },
        schema: {
          operationId: 'updateVendor',
          tags,
          summary: 'Update a vendor (409 vendor_archived once archived)',
          params: IdParams,
          body: UpdateVendorBody,
          response: {
            200: VendorIdResponse,
            409: ErrorResponse.describe('vendor_name_taken, or vendor_archived: an archived vendor is not changed'),
          },
        },
      },
      (req) => vendors.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/vendors/:id',
      {
        config: { scope: 'purchasing:write' },
        schema: {
          operationId: 'archiveVendor',
          tags,
          summary: 'Archive a vendor: hidden from the default list, still readable; its orders keep it',
          params: IdParams,
          response: { 200: ArchiveVendorResponse },
        },
      },
      (req) => vendors.archive(contextOf(req), req.params.id),
    );
  };
