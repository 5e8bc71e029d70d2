import type { Prisma, Tool } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { batchSummary, readBatchEnvelope, validateEntries, type BatchResultOf } from '../../core/batch.ts';
import { assertReferences, type Reference } from '../shared/references.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { createToolActivity } from './tool-activity.repository.ts';
import { createToolCustody } from './tool-custody.service.ts';
import { toolCsvStream } from './tool-csv.adapter.ts';
import { renderToolQr } from './tool-qr.adapter.ts';
import { findToolCsvPage, findToolPage } from './tools.repository.ts';
import {
  auditText,
  findOwnedTool,
  lockOwnedTool,
  newScanToken,
  recordToolEvent,
  wouldCycle,
} from './tools.repository.ts';
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

export const TOOL_BATCH_CAP = 100;

const ASSIGNMENTS = [
  ['assignedUserId', 'user'],
  ['assignedVehicleId', 'vehicle'],
  ['assignedYardId', 'yard'],
  ['parentKitId', 'kit'],
] as const;

function referencesOf(
  input: Partial<Pick<CreateToolInput, 'parentKitId' | 'assignedUserId' | 'assignedVehicleId' | 'assignedYardId'>>,
): Reference[] {
  return [
    { field: 'parentKitId', kind: 'tool', id: input.parentKitId },
    { field: 'assignedUserId', kind: 'user', id: input.assignedUserId },
    { field: 'assignedVehicleId', kind: 'asset', id: input.assignedVehicleId },
    { field: 'assignedYardId', kind: 'yard', id: input.assignedYardId },
  ];
}

/** `{field: message}` as one readable line for batch entries. */
const formErrorOf = (fieldErrors: Record<string, string>) =>
  Object.entries(fieldErrors)
    .map(([field, message]) => `${field} ${message}`)
    .join('; ');

/** Rows per query of the CSV export: large enough that the round trips vanish, small enough to keep memory flat. */
const CSV_PAGE_ROWS = 5_000;

export function createToolService(deps: Pick<ServiceDeps, 'db' | 'config'>) {
  const { db, config } = deps;

  /** Inserts a tool with its tool_created audit event (its oldest event) and tool.created. */
  async function insert(tx: Tx, ctx: RequestContext, input: CreateToolInput, actorId: string | null): Promise<Tool> {
    const isConsumable = input.isConsumable ?? false;
    const tool = await tx.tool.create({
      data: {
        orgId: ctx.orgId,
        name: input.name,
        category: input.category ?? null,
        makeModel: input.makeModel ?? null,
        serial: input.serial ?? null,
        purchaseDate: input.purchaseDate ?? null,
        purchaseCost: input.purchaseCost ?? null,
        supplier: input.supplier ?? null,
        warrantyEndDate: input.warrantyEndDate ?? null,
        isConsumable,
        stockLevel: isConsumable ? (input.stockLevel ?? null) : null,
        minStockLevel: input.minStockLevel ?? null,
        notes: input.notes ?? null,
        parentKitId: input.parentKitId ?? null,
        assignedUserId: input.assignedUserId ?? null,
        assignedVehicleId: input.assignedVehicleId ?? null,
        assignedYardId: input.assignedYardId ?? null,
        pmIntervalDays: input.pmIntervalDays ?? null,
        scanToken: newScanToken(),
      },
    });
    await recordToolEvent(tx, ctx, tool.id, {
      kind: 'AUDIT',
      actorId,
      createdAt: tool.createdAt,
      description: auditText('tool_created', [
        ['name', tool.name],
        ['category', tool.category],
        ['consumable', isConsumable ? 'true' : null],
      ]),
    });
    await emit(tx, ctx.orgId, 'tool.created', {
      toolId: tool.id,
      name: tool.name,
      category: tool.category,
      isConsumable,
      scanToken: tool.scanToken,
      purchaseCost: tool.purchaseCost,
      actorId,
      at: tool.createdAt.toISOString(),
    });
    return tool;
  }

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
      const data: Record<string, unknown> = {};
      for (const field of fields) {
        if (!sameValue(before[field], patch[field])) data[field] = patch[field];
      }
      // Stock is tracked for consumables only: it is dropped when the tool is (or becomes) a plain tool.
      const consumable = (data.isConsumable as boolean | undefined) ?? before.isConsumable;
      if (!consumable) {
        if (before.stockLevel !== null) data.stockLevel = null;
        else delete data.stockLevel;
      }
      if (Object.keys(data).length === 0) return;
      const after = await tx.tool.update({ where: { id }, data: data as Prisma.ToolUncheckedUpdateInput });
      const at = new Date();
      if (after.status !== before.status) {
        await recordToolEvent(tx, ctx, id, {
          kind: 'AUDIT',
          description: auditText('status_changed', [
            ['from', before.status],
            ['to', after.status],
          ]),
        });
      }
      const changes = ASSIGNMENTS.filter(([field]) => before[field] !== after[field]).map(([field, type]) => ({
        type,
        from: before[field],
        to: after[field],
      }));
      for (const c of changes) {
        await recordToolEvent(tx, ctx, id, {
          kind: 'ASSIGNMENT',
          description: auditText('assignment_changed', [
            ['type', c.type],
            ['from', c.from ?? 'none'],
            ['to', c.to ?? 'none'],
          ]),
        });
      }
      if (changes.length > 0) {
        await emit(tx, ctx.orgId, 'tool.assignment_changed', {
          toolId: id,
          name: after.name,
          changes,
          actorId: ctx.actorId,
          at: at.toISOString(),
        });
      }
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
        return insert(tx, ctx, input, ctx.actorId);
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
          const tool = await insert(tx, ctx, data, null);
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

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
  return a === b;
}

export type ToolService = ReturnType<typeof createToolService>;
