import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../composition.ts';
import { batchRoute } from '../../core/batch.ts';
import { TOOL_BATCH_CAP } from './tools.service.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import { csvFileName } from './tool-csv.adapter.ts';
import {
  AdjustStockResponse,
  CheckinResponse,
  CheckoutResponse,
  ListToolsResponse,
  MarkServicedResponse,
  ReportResponse,
  ToolBatchResponse,
  ToolCreatedResponse,
  ToolDetailResponse,
  ToolEventsResponse,
  ToolIdResponse,
  UtilizationResponse,
  TOOL_CSV_CONTENT,
  TOOL_CSV_HEADERS,
  TOOL_QR_CONTENT,
} from './tool-responses.schemas.ts';
import {
  AdjustStockBody,
  CheckinBody,
  CheckoutBody,
  CreateToolBody,
  ListToolsQuery,
  MarkServicedBody,
  QrQuery,
  ReportBody,
  ToolDetailQuery,
  ToolEventsQuery,
  UpdateToolBody,
  UtilizationQuery,
} from './tools.schemas.ts';

export const toolRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const batch = batchRoute(CreateToolBody, TOOL_BATCH_CAP);
    const tools = services.tools;
    const tags = ['tools'];
    const read = { scope: 'tools:read' as const };
    const write = { scope: 'tools:write' as const };

    app.get(
      '/tools',
      {
        config: read,
        schema: {
          operationId: 'listTools',
          tags,
          summary: 'List tools by name, or export them as CSV (format=csv)',
          querystring: ListToolsQuery,
          // The CSV is streamed (never serialized); the JSON body is still checked against ListToolsResponse.
          response: {
            200: z.union([ListToolsResponse, z.string().describe('format=csv: text/csv file with every matching row')]),
          },
          'x-content': { 200: TOOL_CSV_CONTENT },
          'x-headers': { 200: TOOL_CSV_HEADERS },
        },
      },
      async (req, reply) => {
        const ctx = contextOf(req);
        if (req.query.format === 'csv') {
          reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="${csvFileName()}"`);
          // Streams bypass the serializer; the cast only satisfies the JSON-typed reply.
          return reply.send(tools.exportCsv(ctx, req.query) as unknown as string);
        }
        return tools.list(ctx, req.query);
      },
    );

    app.post(
      '/tools',
      {
        config: write,
        schema: {
          operationId: 'createTool',
          tags,
          summary: 'Create a tool',
          body: CreateToolBody,
          response: { 201: ToolCreatedResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await tools.create(contextOf(req), req.body)),
    );

    app.post(
      '/tools/batch',
      {
        config: write,
        schema: {
          operationId: 'createToolsBatch',
          tags,
          summary: 'Create up to 100 tools; each entry succeeds or fails on its own',
          body: batch.body,
          response: { 200: ToolBatchResponse },
        },
        validatorCompiler: batch.validatorCompiler,
      },
      (req) => tools.createBatch(contextOf(req), req.body),
    );

    app.get(
      '/tools/:id',
      {
        config: read,
        schema: {
          operationId: 'getTool',
          tags,
          summary: 'Tool detail',
          params: IdParams,
          querystring: ToolDetailQuery,
          response: { 200: ToolDetailResponse },
        },
      },
      (req) => tools.get(contextOf(req), req.params.id, req.query),
    );

    app.patch(
      '/tools/:id',
      {
        config: write,
        schema: {
          operationId: 'updateTool',
          tags,
          summary: 'Update a tool, its status or assignments',
          params: IdParams,
          body: UpdateToolBody,
          response: { 200: ToolIdResponse },
        },
      },
      (req) => tools.update(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/tools/:id/checkout',
      {
        config: write,
        schema: {
          operationId: 'checkoutTool',
          tags,
          summary: 'Check a tool (or a kit with its parts) out',
          params: IdParams,
          body: CheckoutBody,
          response: {
            200: CheckoutResponse,
            409: z.object({
              ok: z.literal(false),
              error: z.string(),
              message: z.string(),
              checkedOutToUserId: z.string().nullable().optional(),
              checkedOutVehicleId: z.string().nullable().optional(),
            }),
          },
        },
      },
      (req) => tools.checkout(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/tools/:id/checkin',
      {
        config: write,
        schema: {
          operationId: 'checkinTool',
          tags,
          summary: 'Check a tool in with its condition',
          params: IdParams,
          body: CheckinBody,
          response: { 200: CheckinResponse },
        },
      },
      (req) => tools.checkin(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/tools/:id/report',
      {
        config: write,
        schema: {
          operationId: 'reportTool',
          tags,
          summary: 'Report a failure, request a replacement or mark missing',
          params: IdParams,
          body: ReportBody,
          response: { 200: ReportResponse },
        },
      },
      (req) => tools.report(contextOf(req), req.params.id, req.body),
    );

    app.post(
      '/tools/:id/adjust-stock',
      {
        config: write,
        schema: {
          operationId: 'adjustToolStock',
          tags,
          summary: "Add to or take from a consumable's stock",
          params: IdParams,
          body: AdjustStockBody,
          response: {
            201: AdjustStockResponse,
            409: z.object({ ok: z.literal(false), error: z.string(), message: z.string() }),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await tools.adjustStock(contextOf(req), req.params.id, req.body)),
    );

    app.post(
      '/tools/:id/mark-serviced',
      {
        config: write,
        schema: {
          operationId: 'markToolServiced',
          tags,
          summary: 'Record preventive maintenance',
          params: IdParams,
          body: MarkServicedBody,
          response: { 201: MarkServicedResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await tools.markServiced(contextOf(req), req.params.id, req.body)),
    );

    app.get(
      '/tools/:id/events',
      {
        config: read,
        schema: {
          operationId: 'listToolEvents',
          tags,
          summary: 'Tool history, newest first',
          params: IdParams,
          querystring: ToolEventsQuery,
          response: { 200: ToolEventsResponse },
        },
      },
      (req) => tools.events(contextOf(req), req.params.id, req.query),
    );

    app.get(
      '/tools/:id/utilization',
      {
        config: read,
        schema: {
          operationId: 'getToolUtilization',
          tags,
          summary: 'Checked-out time over a window',
          params: IdParams,
          querystring: UtilizationQuery,
          response: { 200: UtilizationResponse },
        },
      },
      (req) => tools.utilization(contextOf(req), req.params.id, req.query),
    );

    app.get(
      '/tools/:id/qr',
      {
        config: read,
        schema: {
          operationId: 'getToolQr',
          tags,
          summary: 'QR label image linking to the public scan page',
          params: IdParams,
          querystring: QrQuery,
          response: { 200: z.string().describe('image/png (default) or image/svg+xml (fmt=svg)') },
          'x-content': { 200: TOOL_QR_CONTENT },
        },
      },
      async (req, reply) => {
        const image = await tools.qr(contextOf(req), req.params.id, req.query);
        reply.type(image.contentType).header('cache-control', 'private, max-age=3600');
        // A Buffer or a non-JSON string is written as is, never passed to the JSON serializer.
        return reply.send(image.body as string);
      },
    );
  };
