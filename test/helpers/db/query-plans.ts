import type { SqlRunner } from '../../../src/db/database.ts';

/** A node of `EXPLAIN (FORMAT JSON)`, as far as the plan tests read it. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Recheck Cond'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  'Parent Relationship'?: string;
  /** The partition scanned, when `Relation Name` was rewritten to its partitioned table (asParents). */
  Partition?: string;
  Plans?: PlanNode[];
}

export const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** Scans of one table anywhere under `plan`. */
export const scansOf = (plan: PlanNode, table: string) =>
  nodes(plan).filter((n) => /Scan/.test(n['Node Type']) && n['Relation Name'] === table);

/**
 * Names a partition's scan by its partitioned table and index (meter_logs_2026_11 reads as meter_logs), so that
 * the plan tests name what a query relies on whatever months exist; the partitions read are kept in `Partition`.
 */
export async function asParents(db: { sql: Pick<SqlRunner, 'query'> }, plans: PlanNode[]): Promise<PlanNode[]> {
  const rows = await db.sql.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_inherits i
     JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent`,
  );
  const parentOf = new Map(rows.map((r) => [r.child, r.parent]));
  for (const n of plans.flatMap(nodes)) {
    const table = n['Relation Name'];
    if (table && parentOf.has(table)) {
      n.Partition = table;
      n['Relation Name'] = parentOf.get(table);
    }
    const index = n['Index Name'];
    if (index && parentOf.has(index)) n['Index Name'] = parentOf.get(index);
  }
  return plans;
}

/**
 * Every statement that `fn` runs on the SqlRunner it is given, planned (EXPLAIN) instead of run, with each planner
 * setting in `off` switched off for the duration (e.g. enable_seqscan: on test-sized tables the planner rightly
 * prefers sequential scans, so they are priced out to see which index a query can use). fn sees no rows, so its
 * own failure after the statements is expected and ignored.
 */
export async function plansOf(
  db: { sql: SqlRunner },
  fn: (sql: SqlRunner) => Promise<unknown>,
  off: string[] = ['enable_seqscan'],
): Promise<PlanNode[]> {
  const plans: PlanNode[] = [];
  const explaining = (conn: SqlRunner): SqlRunner => ({
    ...conn,
    query: async <T>(text: string, params: unknown[] = []) => {
      const [row] = await conn.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
      const raw = row['QUERY PLAN'];
      const json = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
      plans.push(json[0].Plan);
      return [] as T[];
    },
  });
  await db.sql.withExclusiveLock(0x11_11, async (conn) => {
    for (const setting of off) await conn.exec(`SET ${setting} = off`);
    try {
      await fn(explaining(conn)).catch(() => {});
    } finally {
      for (const setting of off) await conn.exec(`RESET ${setting}`);
    }
  });
  return asParents(db, plans);
}
