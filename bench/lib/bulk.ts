// Bulk loading's usual shape for the benchmarks' large seeds: a table's secondary indexes dropped before the rows go
// in and built after, in one pass each, instead of millions of random index inserts.
import type pg from 'pg';

/** Drops `table`'s secondary indexes (neither primary nor unique); the returned function builds them again. */
export async function dropSecondaryIndexes(client: pg.ClientBase, table: string): Promise<() => Promise<void>> {
  const idx = (
    await client.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = $1::regclass AND NOT i.indisprimary AND NOT i.indisunique`,
      [table],
    )
  ).rows;
  for (const x of idx) await client.query(`DROP INDEX "${x.name}"`);
  return async () => {
    // A partitioned table's index reads `ON ONLY` (the parent alone): built here on every partition.
    for (const x of idx) await client.query(x.def.replace(' ON ONLY ', ' ON '));
  };
}
