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

export type YardWithCounts = Yard & { assetCount: number; toolCount: number };

/**
 * A yard and how many assets and tools it holds, in one round trip: the counts are subqueries on
 * assets("orgId", "yardId") and tools("orgId", "assignedYardId") (index-only scans on a vacuumed table), on the
 * parameters rather than the outer row, so the planner sees the values (test/db/aggregate-plans.test.ts).
 */
export async function findYardWithCounts(sql: SqlRunner, orgId: string, id: string): Promise<YardWithCounts | null> {
  const rows = await sql.query<YardWithCounts>(YARD_WITH_COUNTS_SQL, [id, orgId], 'yard_with_counts');
  return rows[0] ?? null;
}

/** findYardWithCounts()'s statement; parameters: the yard's id, its organisation. */
export const YARD_WITH_COUNTS_SQL = `SELECT y.*,
    (SELECT count(*)::int FROM assets WHERE "orgId" = $2 AND "yardId" = $1) AS "assetCount",
    (SELECT count(*)::int FROM tools WHERE "orgId" = $2 AND "assignedYardId" = $1) AS "toolCount"
  FROM yards y WHERE y.id = $1 AND y."orgId" = $2`;
