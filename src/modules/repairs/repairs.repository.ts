import type { SqlRunner } from '../../db/database.ts';
import type { Repair } from '../../generated/prisma/client.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { ListRepairsFilter } from './repairs.schemas.ts';

/**
 * Newest first. The narrowest filter picks the index: repairs(workOrderId), repairs(assetId, createdAt, id),
 * repairs(projectId, createdAt, id), else repairs(orgId, createdAt, id); the cursor is a row-value range on it.
 */
export async function listRepairs(
  sql: SqlRunner,
  orgId: string,
  query: ListRepairsFilter,
  after: [Date, string] | null,
): Promise<Repair[]> {
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.assetId) where.push(`"assetId" = $${params.push(query.assetId)}`);
  if (query.projectId) where.push(`"projectId" = $${params.push(query.projectId)}`);
  if (query.workOrderId) where.push(`"workOrderId" = $${params.push(query.workOrderId)}`);
  if (query.since) where.push(`"createdAt" >= $${params.push(query.since.toISOString())}::timestamptz`);
  const { text, params: all } = keysetSql({
    from: 'repairs',
    where,
    params,
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
  });
  return sql.query<Repair>(text, all);
}
