import type { SqlRunner } from '../../db/database.ts';
import { decodeCursor, encodeCursor, keysetSql, NEWEST_FIRST, timeIdCursor } from '../../core/pagination.ts';
import { ledgerEntryOf, type LedgerEntry } from './part-ledger.operations.ts';
import type { LedgerQueryInput } from './part-inventory.schemas.ts';

/** Newest first on (orgId, partId|yardId|-, createdAt, id): the filter picks the index whose range it is. */
export async function findLedgerPage(
  sql: SqlRunner,
  orgId: string,
  q: LedgerQueryInput,
): Promise<{ entries: LedgerEntry[]; nextCursor: string | null }> {
  const params: unknown[] = [orgId];
  const where = [`"orgId" = $1`];
  const bind = (v: unknown, cast = '') => {
    params.push(v);
    return `$${params.length}${cast}`;
  };
  if (q.partId) where.push(`"partId" = ${bind(q.partId)}`);
  if (q.yardId) where.push(`"yardId" = ${bind(q.yardId)}`);
  if (q.type) where.push(`"type"::text IN (${q.type.map((t) => bind(t)).join(', ')})`);
  if (q.since) where.push(`"createdAt" >= ${bind(q.since, '::timestamptz')}`);
  const after = timeIdCursor(decodeCursor(q.cursor, 2));
  const { text, params: all } = keysetSql({
    from: '"inventory_ledger"',
    where,
    params,
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: q.limit + 1,
  });
  const rows = await sql.query<Parameters<typeof ledgerEntryOf>[0]>(text, all);
  const entries = rows.slice(0, q.limit).map(ledgerEntryOf);
  const last = entries[entries.length - 1];
  return {
    entries,
    nextCursor: rows.length > q.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
  };
}

export interface ValuationPageRow {
  partId: string;
  partNumber: string;
  partName: string;
  yardId: string;
  onHand: string;
  value: string;
}

/** Rows with stock by (partId, yardId): the stock table's primary key, or (orgId, yardId, partId) for one yard. */
export async function findValuationPage(
  sql: SqlRunner,
  orgId: string,
  q: { yardId?: string; cursor?: string; limit: number },
): Promise<{ rows: ValuationPageRow[]; nextCursor: string | null }> {
  const params: unknown[] = [orgId];
  const where = [`s."orgId" = $1`, `s."onHand" > 0`];
  if (q.yardId) {
    params.push(q.yardId);
    where.push(`s."yardId" = $${params.length}`);
  }
  const after = decodeCursor(q.cursor, 2);
  if (after) {
    params.push(String(after[0]), String(after[1]));
    where.push(`(s."partId", s."yardId") > ($${params.length - 1}, $${params.length})`);
  }
  params.push(q.limit + 1);
  const rows = await sql.query<ValuationPageRow>(
    `SELECT s."partId", p."number" AS "partNumber", p."name" AS "partName", s."yardId", s."onHand", s."value"
     FROM "part_stock" s JOIN "parts" p ON p."id" = s."partId"
     WHERE ${where.join(' AND ')} ORDER BY s."partId", s."yardId" LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > q.limit && last ? encodeCursor([last.partId, last.yardId]) : null };
}

export async function valuationTotal(sql: SqlRunner, orgId: string, yardId?: string): Promise<string> {
  const rows = await sql.query<{ total: string }>(
    `SELECT COALESCE(sum("value"), 0)::text AS "total" FROM "part_stock"
     WHERE "orgId" = $1 AND "onHand" > 0 ${yardId ? `AND "yardId" = $2` : ''}`,
    yardId ? [orgId, yardId] : [orgId],
  );
  return rows[0].total;
}
