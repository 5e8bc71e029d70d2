import { Prisma, type Tool } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import { ValidationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import { LOW_STOCK_FALLBACK, type ToolFilters } from './tools.schemas.ts';
import { csvLines, TOOL_CSV_SELECT, type CsvRow } from './tools.csv.ts';

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
    parts.push(Prisma.sql`"isConsumable" AND "stockLevel" IS NOT NULL AND "stockLevel" <= COALESCE("minStockLevel", ${Prisma.raw(String(LOW_STOCK_FALLBACK))})`);
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
  if (typeof name !== 'string' || typeof id !== 'string') throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
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
  return { lines: csvLines(taken), nextCursor: rows.length > page.limit && last ? encodeCursor([last.name, last.id]) : null };
}
