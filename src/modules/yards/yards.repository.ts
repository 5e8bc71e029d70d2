import type { SqlRunner } from '../../db/database.ts';
import type { Yard } from '../../generated/prisma/client.ts';
import { keysetSql } from '../../core/pagination.ts';

/**
 * Alphabetical on the yards(orgId, name) unique index. Names are unique in the organisation, so the name
 * alone orders and resumes the list (the cursor still carries the id, as before); an id in the ORDER BY
 * would add a sort the index cannot serve.
 */
export function listYards(
  sql: SqlRunner,
  orgId: string,
  after: [string, string] | null,
  take: number,
): Promise<Yard[]> {
  const { text, params } = keysetSql({
    from: 'yards',
    where: ['"orgId" = $1'],
    params: [orgId],
    order: [{ column: 'name' }],
    direction: 'asc',
    after: after ? [after[0]] : null,
    take,
  });
  return sql.query<Yard>(text, params);
}
