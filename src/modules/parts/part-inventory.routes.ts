import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { LedgerQuery, LedgerResponse, ValuationQuery, ValuationResponse } from './part-inventory.schemas.ts';
import { VALUATION_CSV_HEADER, valuationCsvFileName } from './part-valuation-csv.adapter.ts';

const CSV_CONTENT = {
  'text/csv': {
    schema: { type: 'string', description: 'format=csv: a header row and one row per part and yard with stock' },
    example: `${VALUATION_CSV_HEADER}\n0b6f1c1e-2f7a-4c1b-9a55-2d0c9f5b7e11,FLT-100,Oil filter,7d1e3c55-8a9b-4f1e-b2c3-4d5e6f7a8b9c,5,35.00\n`,
  },
};
const CSV_HEADERS = {
  'Content-Disposition': {
    description: 'With format=csv: `attachment; filename="inventory-valuation-<YYYY-MM-DD>.csv"`',
    schema: { type: 'string', example: 'attachment; filename="inventory-valuation-2026-03-14.csv"' },
  },
};

export const partInventoryRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const inventory = services.partInventory;
    const tags = ['inventory'];

    app.get(
      '/inventory/ledger',
      {
        config: { scope: 'parts:read' },
        schema: {
          operationId: 'listInventoryLedger',
          tags,
          summary: 'Every stock movement, newest first',
          querystring: LedgerQuery,
          response: { 200: LedgerResponse },
        },
      },
      (req) => inventory.ledger(contextOf(req), req.query),
    );

    app.get(
      '/inventory/valuation',
      {
        config: { scope: 'parts:read' },
        schema: {
          operationId: 'getInventoryValuation',
          tags,
          summary: 'Stock value per part and yard with the total, or every row as CSV (format=csv)',
          querystring: ValuationQuery,
          // The CSV is streamed (never serialized); the JSON body is still checked against ValuationResponse.
          response: {
            200: z.union([ValuationResponse, z.string().describe('format=csv: text/csv file with every row')]),
          },
          'x-content': { 200: CSV_CONTENT },
          'x-headers': { 200: CSV_HEADERS },
        },
      },
      async (req, reply) => {
        const ctx = contextOf(req);
        if (req.query.format === 'csv') {
          reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="${valuationCsvFileName()}"`);
          // Streams bypass the serializer; the cast only satisfies the JSON-typed reply.
          return reply.send(inventory.exportValuationCsv(ctx, req.query) as unknown as string);
        }
        return inventory.valuation(ctx, req.query);
      },
    );
  };
