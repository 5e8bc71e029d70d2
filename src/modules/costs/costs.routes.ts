import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import { costCsvFileName } from './cost-csv.adapter.ts';
import {
  AssetCostsQuery,
  AssetCostsResponse,
  COST_CSV_CONTENT,
  CostReportQuery,
  CostReportResponse,
  DepreciationResponse,
} from './costs.schemas.ts';

export const costRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const costs = services.costs;
    const tags = ['costs'];
    const config = { scope: 'reports:read' as const };

    app.get(
      '/assets/:id/depreciation',
      {
        config,
        schema: {
          operationId: 'getAssetDepreciation',
          tags,
          summary: 'Depreciation schedule and book value today of an asset',
          params: IdParams,
          response: { 200: DepreciationResponse },
        },
      },
      (req) => costs.depreciation(contextOf(req), req.params.id),
    );

    app.get(
      '/assets/:id/costs',
      {
        config,
        schema: {
          operationId: 'getAssetCosts',
          tags,
          summary: 'What an asset cost in a period (default the last 365 days), per meter unit, and its fuel economy',
          params: IdParams,
          querystring: AssetCostsQuery,
          response: { 200: AssetCostsResponse },
        },
      },
      (req) => costs.assetCosts(contextOf(req), req.params.id, req.query),
    );

    app.get(
      '/reports/costs',
      {
        config,
        schema: {
          operationId: 'getCostReport',
          tags,
          summary: 'Fleet cost report by asset, project, yard or asset class, most expensive first (or CSV)',
          querystring: CostReportQuery,
          // The CSV is streamed (never serialized); the JSON body is still checked against CostReportResponse.
          response: {
            200: z.union([CostReportResponse, z.string().describe('format=csv: text/csv with every row')]),
          },
          'x-content': { 200: COST_CSV_CONTENT },
        },
      },
      async (req, reply) => {
        const ctx = contextOf(req);
        if (req.query.format === 'csv') {
          const stream = await costs.exportCsv(ctx, req.query);
          reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="${costCsvFileName(req.query.from, req.query.to)}"`);
          // Streams bypass the serializer; the cast only satisfies the JSON-typed reply.
          return reply.send(stream as unknown as string);
        }
        return costs.report(ctx, req.query);
      },
    );
  };
