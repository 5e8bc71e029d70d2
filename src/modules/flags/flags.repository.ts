import type { Flag } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { enumFilter, keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import { FLAG_SEVERITIES, type ListFlagsInput } from './flags.schemas.ts';

/**
 * Newest first, one index range per requested status: flags(orgId, status, createdAt, id), or by asset
 * flags(assetId, status, createdAt, id). Severity is a filter within the range.
 */
export async function listFlags(
  sql: SqlRunner,
  orgId: string,
  query: ListFlagsInput,
  after: [Date, string] | null,
): Promise<Flag[]> {
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.assetId) where.push(`"assetId" = $${params.push(query.assetId)}`);
  enumFilter(where, params, 'severity', 'FlagSeverity', query.severity, FLAG_SEVERITIES);
  const { text, params: all } = keysetSql({
    from: 'flags',
    where,
    params,
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
    split: { column: 'status', values: query.status },
  });
  return sql.query<Flag>(text, all);
}

/** The open (OPEN or IN_PROGRESS) flag raised for this signal on this asset, if any (flags_open_dedupe_key). */
export function findOpenFlagByKey(tx: Tx, orgId: string, assetId: string, dedupeKey: string): Promise<Flag | null> {
  return tx.flag.findFirst({ where: { orgId, assetId, dedupeKey, status: { in: ['OPEN', 'IN_PROGRESS'] } } });
}
