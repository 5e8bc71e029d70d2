import type { Part } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { SqlRunner } from '../../db/database.ts';
import { notFound } from '../../core/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import type { ListPartsInput, PartWithTotals } from './parts.schemas.ts';

/** The part's stock totals over every yard, as a lateral join. */
const TOTALS = `LEFT JOIN LATERAL (
    SELECT COALESCE(sum(s."onHand"), 0) AS "onHand", COALESCE(sum(s."value"), 0) AS "value"
    FROM "part_stock" s WHERE s."orgId" = p."orgId" AND s."partId" = p."id") t ON true`;

const likeEscaped = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A page of the organisation's parts by number (case-insensitive), read on the (orgId, lower(number)) unique
 * index: the cursor is the last number's lower-case form, unique by that index.
 */
export async function findPartPage(sql: SqlRunner, orgId: string, q: ListPartsInput) {
  const params: unknown[] = [orgId];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = [`p."orgId" = $1`, q.archived ? `p."archivedAt" IS NOT NULL` : `p."archivedAt" IS NULL`];
  if (q.q) {
    const like = bind(likeEscaped(q.q));
    where.push(`(p."number" ILIKE ${like} OR p."name" ILIKE ${like} OR p."manufacturerPartNumber" ILIKE ${like})`);
  }
  if (q.category) where.push(`lower(p."category") = lower(${bind(q.category)})`);
  if (q.yardId)
    where.push(`EXISTS (SELECT 1 FROM "part_stock" s WHERE s."orgId" = p."orgId" AND s."partId" = p."id"
      AND s."yardId" = ${bind(q.yardId)} AND s."onHand" > 0)`);
  if (q.belowReorderPoint)
    where.push(`p."reorderPoint" IS NOT NULL AND p."trackInventory" AND (
      EXISTS (SELECT 1 FROM "part_stock" s WHERE s."orgId" = p."orgId" AND s."partId" = p."id"
        AND s."onHand" <= p."reorderPoint")
      OR NOT EXISTS (SELECT 1 FROM "part_stock" s WHERE s."orgId" = p."orgId" AND s."partId" = p."id"))`);
  const after = decodeCursor(q.cursor, 1);
  if (after) where.push(`lower(p."number") > ${bind(String(after[0]))}`);
  const rows = await sql.query<PartWithTotals>(
    `SELECT p.*, t."onHand", t."value" FROM "parts" p ${TOTALS}
     WHERE ${where.join(' AND ')} ORDER BY lower(p."number") LIMIT ${bind(q.limit + 1)}`,
    params,
  );
  const parts = rows.slice(0, q.limit);
  const last = parts[parts.length - 1];
  return { parts, nextCursor: rows.length > q.limit && last ? encodeCursor([last.number.toLowerCase()]) : null };
}

export async function findPartWithTotals(sql: SqlRunner, orgId: string, id: string): Promise<PartWithTotals> {
  const rows = await sql.query<PartWithTotals>(
    `SELECT p.*, t."onHand", t."value" FROM "parts" p ${TOTALS} WHERE p."id" = $1 AND p."orgId" = $2`,
    [id, orgId],
  );
  if (!rows[0]) throw notFound('Part');
  return rows[0];
}

export function findPartStock(sql: SqlRunner, orgId: string, partId: string) {
  return sql.query<{ yardId: string; onHand: string; value: string; low: boolean }>(
    `SELECT s."yardId", s."onHand", s."value",
            COALESCE(s."onHand" <= p."reorderPoint", false) AS "low"
     FROM "part_stock" s JOIN "parts" p ON p."id" = s."partId"
     WHERE s."orgId" = $1 AND s."partId" = $2 ORDER BY s."yardId"`,
    [orgId, partId],
  );
}

/** The part, locked until the transaction ends (its settings cannot change under a movement or a PATCH). */
export async function lockOwnedPart(tx: Tx, orgId: string, id: string): Promise<Part> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "parts" WHERE "id" = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  if (!rows[0]) throw notFound('Part');
  return tx.part.findFirstOrThrow({ where: { id, orgId } });
}

export async function findOwnedPart(tx: Tx, orgId: string, id: string): Promise<Part> {
  const part = await tx.part.findFirst({ where: { id, orgId } });
  if (!part) throw notFound('Part');
  return part;
}

/** True when some yard holds the part. */
export async function hasStock(tx: Tx, orgId: string, partId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM "part_stock" WHERE "orgId" = ${orgId} AND "partId" = ${partId} AND "onHand" > 0`;
  return rows[0].n > 0;
}

/** The part share-locked until the transaction ends (movements run side by side; a PATCH waits), or null. */
export async function sharePart(
  tx: Tx,
  orgId: string,
  id: string,
): Promise<{ trackInventory: boolean; unitCost: string | null } | null> {
  const rows = await tx.$queryRaw<{ trackInventory: boolean; unitCost: string | null }[]>`
    SELECT "trackInventory", "unitCost"::text AS "unitCost" FROM "parts"
    WHERE "id" = ${id} AND "orgId" = ${orgId} FOR SHARE`;
  return rows[0] ?? null;
}

/**
 * True when the yard holds stock of any part. Its stock rows are locked first, so a movement committing into the
 * yard meanwhile is waited for and seen (a yard deleted cascades its emptied stock rows and layers).
 */
export async function yardHoldsStock(tx: Tx, orgId: string, yardId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ stocked: boolean | null }[]>`
    SELECT bool_or(s."onHand" > 0) AS "stocked" FROM (
      SELECT "onHand" FROM "part_stock" WHERE "orgId" = ${orgId} AND "yardId" = ${yardId} FOR UPDATE) s`;
  return rows[0]?.stocked === true;
}
