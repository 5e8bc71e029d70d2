import { Prisma, type Tool } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { ValidationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import { LOW_STOCK_FALLBACK, type ToolFilters } from './tools.schemas.ts';

/**
 * The list filters as one SQL condition. Every rule (lowStock and pmOverdue included) is decided by the
 * database, so a page always holds `limit` rows when more match: no post-filtering.
 */
export function toolFilterSql(orgId: string, f: ToolFilters, now: Date): Prisma.Sql {
  const parts: Prisma.Sql[] = [
    Prisma.sql`"orgId" = ${orgId}`,
    Prisma.sql`"status"::text IN (${Prisma.join(f.status)})`,
  ];
  if (f.category !== undefined) parts.push(Prisma.sql`"category" = ${f.category}`);
  if (f.assignedUserId !== undefined) parts.push(Prisma.sql`"assignedUserId" = ${f.assignedUserId}`);
  if (f.assignedVehicleId !== undefined) parts.push(Prisma.sql`"assignedVehicleId" = ${f.assignedVehicleId}`);
  if (f.parentKitId !== undefined) parts.push(Prisma.sql`"parentKitId" = ${f.parentKitId}`);
  if (f.lowStock) {
    parts.push(Prisma.sql`"isConsumable" AND "stockLevel" IS NOT NULL AND "stockLevel" <= COALESCE("minStockLevel", ${LOW_STOCK_FALLBACK}::int)`);
  }
  if (f.pmOverdue) {
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

/** One page of tools in name order, and the cursor of the next page (null on the last). */
export async function findToolPage(
  tx: Tx,
  orgId: string,
  filters: ToolFilters,
  page: { limit: number; cursor?: string },
  now: Date,
): Promise<{ tools: Tool[]; nextCursor: string | null }> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "tools"
    WHERE ${toolFilterSql(orgId, filters, now)}${afterCursor(page.cursor)}
    ORDER BY "name" ASC, "id" ASC
    LIMIT ${page.limit + 1}`;
  const ids = rows.slice(0, page.limit).map((r) => r.id);
  const found = await tx.tool.findMany({ where: { orgId, id: { in: ids } } });
  const byId = new Map(found.map((t) => [t.id, t]));
  const tools = ids.map((id) => byId.get(id)).filter((t): t is Tool => t !== undefined);
  const last = tools[tools.length - 1];
  return { tools, nextCursor: rows.length > page.limit && last ? encodeCursor([last.name, last.id]) : null };
}
