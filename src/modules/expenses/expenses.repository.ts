import type { SqlRunner } from '../../db/database.ts';
import { keysetSql } from '../../core/pagination.ts';
import type { ExpenseRow, ListExpensesInput } from './expenses.schemas.ts';

/**
 * Newest first by incurredAt. Index per shape: by asset expenses(orgId, assetId, incurredAt, id), by project
 * (orgId, projectId, incurredAt, id), else (orgId, incurredAt, id); the type is a filter on it.
 */
export async function listExpenses(
  sql: SqlRunner,
  orgId: string,
  query: ListExpensesInput,
  after: [Date, string] | null,
): Promise<ExpenseRow[]> {
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.assetId) where.push(`"assetId" = $${params.push(query.assetId)}`);
  if (query.projectId) where.push(`"projectId" = $${params.push(query.projectId)}`);
  if (query.type) where.push(`type = $${params.push(query.type)}`);
  if (query.since) where.push(`"incurredAt" >= $${params.push(query.since.toISOString())}::timestamptz`);
  if (query.until) where.push(`"incurredAt" < $${params.push(query.until.toISOString())}::timestamptz`);
  const { text, params: all } = keysetSql({
    from: 'expenses',
    where,
    params,
    order: [{ column: '"incurredAt"', cast: 'timestamptz' }, { column: 'id' }],
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
  });
  return sql.query<ExpenseRow>(text, all);
}
