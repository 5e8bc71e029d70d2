import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { batchSummary, readBatchEnvelope, validateEntries, type BatchResultOf } from '../../core/batch.ts';
import { assertReferences } from '../shared/references.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { createToolActivity } from './tool-activity.repository.ts';
import { createToolCustody } from './tool-custody.service.ts';
import { toolCsvStream } from './tool-csv.adapter.ts';
import { renderToolQr } from './tool-qr.adapter.ts';
import { findToolCsvPage, findToolPage } from './tools.repository.ts';
import { findOwnedTool, lockOwnedTool, wouldCycle } from './tools.repository.ts';
import { toolBookValue, toToolDetail, toToolRow, type ToolBatchResponse } from './tool-responses.schemas.ts';
import {
  CreateToolBody,
  UPDATABLE_FIELDS,
  type CreateToolInput,
  type ListToolsInput,
  type ToolFilters,
  type UpdateToolInput,
} from './tools.schemas.ts';
import { createToolStock } from './tool-stock.service.ts';
import { applyToolPatch, insertTool, referencesOf } from './tools.operations.ts';

export const TOOL_BATCH_CAP = 100;

/** `{field: message}` as one readable line for batch entries. */
const formErrorOf = (fieldErrors: Record<string, string>) =>
  Object.entries(fieldErrors)
    .map(([field, message]) => `${field} ${message}`)
    .join('; ');

/** Rows per query of the CSV export: large enough that the round trips vanish, small enough to keep memory flat. */
const CSV_PAGE_ROWS = 5_000;

export function createToolService(deps: Pick<ServiceDeps, 'db' | 'config'>) {
  const { db, config } = deps;

  async function update(ctx: RequestContext, id: string, patch: UpdateToolInput) {
    const fields = UPDATABLE_FIELDS.filter((f) => patch[f] !== undefined);
    if (fields.length === 0)
      throw new ValidationError({ body: `send at least one of: ${UPDATABLE_FIELDS.join(', ')}` }, 'The patch is empty');
    await transaction(db, async (tx) => {
      const before = await lockOwnedTool(tx, ctx, id);
      if (patch.parentKitId && (await wouldCycle(tx, ctx.orgId, id, patch.parentKitId))) {
        throw new ValidationError({ parentKitId: 'a tool cannot belong to itself or to one of its own parts' });
      }
      await assertReferences(tx, ctx.orgId, referencesOf(patch));
      await applyToolPatch(tx, ctx, before, patch);
    });
    return { ok: true as const, toolId: id };
  }

  return {
    ...createToolCustody(deps),
    ...createToolStock(deps),
    ...createToolActivity(deps),
    update,

    async list(ctx: RequestContext, query: ListToolsInput) {
      const { tools, nextCursor } = await findToolPage(db.sql, ctx.orgId, query, query, new Date());
      return { ok: true as const, tools: tools.map(toToolRow), nextCursor };
    },

    /**
     * Every matching row as CSV (formatted by the database, see tool-csv.adapter.ts), read in 5,000-row keyset
     * pages (each an index range from the last row) so memory stays flat however many tools match; "now" is
     * fixed once so pmOverdue cannot shift mid-export.
     */
    exportCsv(ctx: RequestContext, filters: ToolFilters) {
      const now = new Date();
      return toolCsvStream((cursor) =>
        findToolCsvPage(db.sql, ctx.orgId, filters, { limit: CSV_PAGE_ROWS, cursor }, now),
      );
    },

    async create(ctx: RequestContext, input: CreateToolInput) {
      const tool = await transaction(db, async (tx) => {
        await assertReferences(tx, ctx.orgId, referencesOf(input));
        return insertTool(tx, ctx, input, ctx.actorId);
      });
      return { ok: true as const, toolId: tool.id, scanToken: tool.scanToken };
    },

    /** Entries are validated one by one; valid entries are created in one transaction (bulk path: actorId null). */
    async createBatch(ctx: RequestContext, body: unknown) {
      const entries = readBatchEnvelope(body, TOOL_BATCH_CAP);
      const { valid, failures } = validateEntries(entries, CreateToolBody);
      type Result = BatchResultOf<typeof ToolBatchResponse>;
      const results: Result[] = failures.map((f) => ({ ...f, formError: formErrorOf(f.fieldErrors) }));
      await transaction(db, async (tx) => {
        for (const { index, data } of valid) {
          try {
            await assertReferences(tx, ctx.orgId, referencesOf(data));
          } catch (err) {
            if (!(err instanceof ValidationError)) throw err;
            results.push({
              index,
              ok: false,
              error: 'validation_failed',
              fieldErrors: err.fieldErrors,
              formError: formErrorOf(err.fieldErrors),
            });
            continue;
          }
          const tool = await insertTool(tx, ctx, data, null);
          results.push({ index, ok: true, toolId: tool.id, scanToken: tool.scanToken });
        }
      });
      results.sort((a, b) => a.index - b.index);
      return { ok: true as const, results, summary: batchSummary(entries.length, results) };
    },

    async get(ctx: RequestContext, id: string, query: { includeBookValue: boolean; usefulLifeYears?: number }) {
      const tool = await findOwnedTool(db.prisma, ctx, id);
      const book = query.includeBookValue ? toolBookValue(tool, query.usefulLifeYears, new Date()) : undefined;
      return { ok: true as const, tool: toToolDetail(tool, book) };
    },

    async qr(ctx: RequestContext, id: string, query: { fmt: 'png' | 'svg'; size: number }) {
      const tool = await findOwnedTool(db.prisma, ctx, id);
      return renderToolQr(`${config.publicBaseUrl}/scan/${tool.scanToken}`, query.fmt, query.size);
    },

    /** The public scan page's data: deliberately only what a finder of the tool may see. */
    async scan(token: string) {
      if (!/^[A-Za-z0-9_-]{16,100}$/.test(token)) return null;
      const tool = await db.prisma.tool.findUnique({
        where: { scanToken: token },
        select: { name: true, category: true, status: true, org: { select: { name: true } } },
      });
      return tool
        ? { name: tool.name, category: tool.category, status: tool.status, organizationName: tool.org.name }
        : null;
    },
  };
}

export type ToolService = ReturnType<typeof createToolService>;
