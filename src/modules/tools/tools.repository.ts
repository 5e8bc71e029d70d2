import { randomBytes } from 'node:crypto';
import { Prisma, type Tool, type ToolEvent, type ToolEventKind } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import type { SqlRunner } from '../../db/database.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import { LOW_STOCK_FALLBACK, type ToolFilters } from './tools.schemas.ts';
import { csvLines, TOOL_CSV_SELECT, type CsvRow } from './tool-csv.adapter.ts';

/** 24 random bytes: a label's token cannot be guessed or enumerated (192 bits). */
export const newScanToken = () => randomBytes(24).toString('base64url');

export async function findOwnedTool(tx: Tx, ctx: RequestContext, id: string): Promise<Tool> {
  const tool = await tx.tool.findFirst({ where: { id, orgId: ctx.orgId } });
  if (!tool) throw notFound('Tool');
  return tool;
}

/**
 * Locks the tool row until the transaction ends, so concurrent custody or stock changes on the same
 * tool run one after the other and each sees the previous one's result.
 */
export async function lockOwnedTool(tx: Tx, ctx: RequestContext, id: string): Promise<Tool> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "tools" WHERE "id" = ${id} AND "orgId" = ${ctx.orgId} FOR UPDATE`;
  if (locked.length === 0) throw notFound('Tool');
  return findOwnedTool(tx, ctx, id);
}

export interface NewToolEvent {
  kind: ToolEventKind;
  condition?: string | null;
  description?: string | null;
  cost?: number | null;
  linkedAssetId?: string | null;
  linkedWorkOrderId?: string | null;
  holderUserId?: string | null;
  holderVehicleId?: string | null;
  /** An attachment of the tool (a photo of its state). */
  photoId?: string | null;
  /** Defaults to the key's user; bulk paths pass null. */
  actorId?: string | null;
  createdAt?: Date;
}

export function recordToolEvent(tx: Tx, ctx: RequestContext, toolId: string, e: NewToolEvent): Promise<ToolEvent> {
  return tx.toolEvent.create({
    data: {
      orgId: ctx.orgId,
      toolId,
      kind: e.kind,
      condition: e.condition ?? null,
      description: e.description ?? null,
      cost: e.cost ?? null,
      linkedAssetId: e.linkedAssetId ?? null,
      linkedWorkOrderId: e.linkedWorkOrderId ?? null,
      holderUserId: e.holderUserId ?? null,
      holderVehicleId: e.holderVehicleId ?? null,
      photoId: e.photoId ?? null,
      actorId: e.actorId === undefined ? ctx.actorId : e.actorId,
      ...(e.createdAt ? { createdAt: e.createdAt } : {}),
    },
  });
}

/** Structured descriptions: `prefix: key=value key=value`, segments with no value left out. */
export function auditText(prefix: string, segments: [string, string | number | null | undefined][]): string {
  const body = segments.filter(([, v]) => v !== null && v !== undefined && v !== '').map(([k, v]) => `${k}=${v}`);
  return [`${prefix}:`, ...body].join(' ');
}

/** Walks up from `parentKitId`; true when `toolId` is among its ancestors (or is the parent itself). */
export async function wouldCycle(tx: Tx, orgId: string, toolId: string, parentKitId: string): Promise<boolean> {
  let current: string | null = parentKitId;
  for (let depth = 0; current && depth < 100; depth++) {
    if (current === toolId) return true;
    const parent: { parentKitId: string | null } | null = await tx.tool.findFirst({
      where: { id: current, orgId },
      select: { parentKitId: true },
    });
    current = parent?.parentKitId ?? null;
  }
  return false;
}

/**
 * The list filters as one SQL condition. Every rule (lowStock and pmOverdue included) is decided by the
 * database, so a page always holds `limit` rows when more match: no post-filtering.
 */
export function toolFilterSql(orgId: string, f: ToolFilters, now: Date): Prisma.Sql {
  const parts: Prisma.Sql[] = [
    Prisma.sql`"orgId" = ${orgId}`,
    // Cast the values, not the column: the column stays indexable.
    Prisma.sql`"status" IN (${Prisma.join(f.status.map((s) => Prisma.sql`${s}::"ToolStatus"`))})`,
  ];
  if (f.category !== undefined) parts.push(Prisma.sql`"category" = ${f.category}`);
  if (f.assignedUserId !== undefined) parts.push(Prisma.sql`"assignedUserId" = ${f.assignedUserId}`);
  if (f.assignedVehicleId !== undefined) parts.push(Prisma.sql`"assignedVehicleId" = ${f.assignedVehicleId}`);
  if (f.parentKitId !== undefined) parts.push(Prisma.sql`"parentKitId" = ${f.parentKitId}`);
  if (f.lowStock) {
    // Literally the predicate of the partial index tools_low_stock_idx, so the planner can use it.
    parts.push(
      Prisma.sql`"isConsumable" AND "stockLevel" IS NOT NULL AND "stockLevel" <= COALESCE("minStockLevel", ${Prisma.raw(String(LOW_STOCK_FALLBACK))})`,
    );
  }
  if (f.pmOverdue) {
    // "pmIntervalDays" > 0 is the predicate of the partial index tools_pm_tracked_idx.
    parts.push(Prisma.sql`"pmIntervalDays" > 0
      AND COALESCE("lastServicedAt", "createdAt") + "pmIntervalDays" * INTERVAL '1 day' <= ${now}::timestamptz`);
  }
  if (f.warrantyExpiringDays !== undefined) {
    const until = new Date(now.getTime() + f.warrantyExpiringDays * 86_400_000);
    parts.push(Prisma.sql`"warrantyEndDate" >= ${now}::timestamptz AND "warrantyEndDate" <= ${until}::timestamptz`);
  }
  return Prisma.join(parts, ' AND ');
}

/** Keyset for "name asc, id asc": the cursor carries the last row's name and id. */
function afterCursor(cursor: string | undefined): Prisma.Sql {
  const key = decodeCursor(cursor, 2);
  if (!key) return Prisma.empty;
  const [name, id] = key;
  if (typeof name !== 'string' || typeof id !== 'string')
    throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
  return Prisma.sql` AND ("name", "id") > (${name}, ${id})`;
}

/**
 * One page of tools in name order on tools(orgId, name, id) (or a partial index of it for lowStock and
 * pmOverdue), and the cursor of the next page (null on the last). One query on the driver: the CSV
 * export reads 2,000-row pages through here, where Prisma's per-row mapping was the cost.
 */
export async function findToolPage(
  sql: SqlRunner,
  orgId: string,
  filters: ToolFilters,
  page: { limit: number; cursor?: string },
  now: Date,
): Promise<{ tools: Tool[]; nextCursor: string | null }> {
  const query = Prisma.sql`
    SELECT * FROM "tools"
    WHERE ${toolFilterSql(orgId, filters, now)}${afterCursor(page.cursor)}
    ORDER BY "name" ASC, "id" ASC
    LIMIT ${page.limit + 1}`;
  const rows = await sql.query<Tool>(query.text, query.values);
  const tools = rows.slice(0, page.limit);
  const last = tools[tools.length - 1];
  return { tools, nextCursor: rows.length > page.limit && last ? encodeCursor([last.name, last.id]) : null };
}

/** findToolPage() for the CSV export: the same filters, order and cursor, each row already a CSV line. */
export async function findToolCsvPage(
  sql: SqlRunner,
  orgId: string,
  filters: ToolFilters,
  page: { limit: number; cursor?: string },
  now: Date,
): Promise<{ lines: string; nextCursor: string | null }> {
  const query = Prisma.sql`
    SELECT "name", "id", ${Prisma.raw(TOOL_CSV_SELECT)} FROM "tools"
    WHERE ${toolFilterSql(orgId, filters, now)}${afterCursor(page.cursor)}
    ORDER BY "name" ASC, "id" ASC
    LIMIT ${page.limit + 1}`;
  const rows = await sql.query<CsvRow & { name: string; id: string }>(query.text, query.values);
  const taken = rows.slice(0, page.limit);
  const last = taken[taken.length - 1];
  return {
    lines: csvLines(taken),
    nextCursor: rows.length > page.limit && last ? encodeCursor([last.name, last.id]) : null,
  };
}
