// Monthly partitions of meter_logs, events and webhook_deliveries (docs/adr/0080-monthly-partitions-built.md):
// created ahead by a daily job, and on demand before a write names a month that has none. The DDL lives in the
// database (fleet_month_partition, migration 20261129150000_monthly_partitions) so that every writer creates a
// month the same way.
import type { Database, SqlRunner } from './database.ts';

/** The partitioned tables and their partition key. */
export const PARTITIONED = { meter_logs: 'loggedAt', events: 'createdAt', webhook_deliveries: 'createdAt' } as const;
export type PartitionedTable = keyof typeof PARTITIONED;

/** How many months after the current one exist ahead of their writes. */
export const MONTHS_AHEAD = 3;
/** Readings are often stamped a little in the past: the previous month is kept ready too. */
const MONTHS_BEHIND: Record<PartitionedTable, number> = { meter_logs: 1, events: 0, webhook_deliveries: 0 };

const PARTITION_LOCK_ID = 72_707_360;
/** A partition's DDL gives up on a lock after this long instead of queueing writers behind it, then retries. */
export const PARTITION_LOCK_TIMEOUT_MS = 1_000;
const RETRIES = 8;

export interface PartitionBound {
  name: string;
  from: Date;
  to: Date;
}

/** The partitions of a table, oldest first (the converted table's history reads from -infinity); [] if none. */
export async function listPartitions(
  sql: Pick<SqlRunner, 'query'>,
  table: PartitionedTable,
): Promise<PartitionBound[]> {
  const rows = await sql.query<{ name: string; lower_bound: Date | string; upper_bound: Date | string }>(
    `SELECT name, lower_bound::text AS lower_bound, upper_bound::text AS upper_bound FROM fleet_partitions($1)`,
    [table],
  );
  return rows.map((r) => ({ name: r.name, from: bound(r.lower_bound), to: bound(r.upper_bound) }));
}

const bound = (v: Date | string): Date =>
  v === '-infinity' ? new Date(-8.64e15) : v === 'infinity' ? new Date(8.64e15) : new Date(v);

/** Whether the table is partitioned already (a database with rows is until its conversion). */
export async function isPartitioned(sql: Pick<SqlRunner, 'query'>, table: PartitionedTable): Promise<boolean> {
  const [row] = await sql.query<{ p: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass('public.' || $1) AND relkind = 'p') AS p`,
    [table],
  );
  return row?.p === true;
}

/** First instant of the UTC month holding `at`, `shift` months later. */
export function monthStart(at: Date, shift = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + shift, 1));
}

const isLockTimeout = (err: unknown) => (err as { code?: string }).code === '55P03';

/**
 * Creates the month partitions of `table` holding `months` (those not covered yet), each in a transaction of its
 * own under PARTITION_LOCK_TIMEOUT_MS, retried with backoff on a lock timeout. Returns the names created.
 */
export async function createMonths(
  sql: SqlRunner,
  table: PartitionedTable,
  months: Date[],
  kind: Database['kind'],
): Promise<string[]> {
  const created: string[] = [];
  for (const at of months) {
    for (let attempt = 0; ; attempt++) {
      try {
        // One simple-protocol text (the values are ours): BEGIN … COMMIT reaches one server session behind a pooler.
        const statement = `SELECT fleet_month_partition('${table}', '${at.toISOString()}'::timestamptz) AS name`;
        // PGlite has one session and no one to wait for; its statement may belong to the caller's transaction.
        const [row] =
          kind === 'pglite'
            ? await sql.query<{ name: string | null }>(statement)
            : await runInTransaction(sql, statement);
        if (row?.name) created.push(row.name);
        break;
      } catch (err) {
        if (!isLockTimeout(err) || attempt >= RETRIES) throw err;
        await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 4_000)));
      }
    }
  }
  return created;
}

async function runInTransaction(sql: SqlRunner, statement: string): Promise<{ name: string | null }[]> {
  await sql.exec('BEGIN');
  try {
    await sql.exec(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
    const rows = await sql.query<{ name: string | null }>(statement);
    await sql.exec('COMMIT');
    return rows;
  } catch (err) {
    await sql.exec('ROLLBACK').catch(() => {});
    throw err;
  }
}

interface Coverage {
  partitioned: boolean;
  ranges: [number, number][];
}
const coverage = new WeakMap<object, Map<PartitionedTable, Promise<Coverage>>>();

function coverageOf(sql: SqlRunner, table: PartitionedTable): Promise<Coverage> {
  let byTable = coverage.get(sql);
  if (!byTable) coverage.set(sql, (byTable = new Map()));
  let entry = byTable.get(table);
  if (!entry) {
    entry = (async () => {
      const partitioned = await isPartitioned(sql, table);
      const parts = partitioned ? await listPartitions(sql, table) : [];
      return { partitioned, ranges: parts.map((p) => [p.from.getTime(), p.to.getTime()] as [number, number]) };
    })();
    entry.catch(() => byTable.delete(table));
    byTable.set(table, entry);
  }
  return entry;
}

/** Forgets what this process knows of a table's partitions (after a drop, or a write that found none). */
export function forgetPartitions(sql: SqlRunner, table: PartitionedTable): void {
  coverage.get(sql)?.delete(table);
}

/**
 * Makes sure a month partition holds each of `dates` before a write of `table` names them: a backdated reading
 * (2019) creates its month on demand, so no row ever needs a DEFAULT partition. What exists is known per process
 * after one catalog read, so a write into a known month costs nothing. Runs on a connection of its own
 * (withExclusiveLock): the partition is committed whatever becomes of the caller's transaction.
 */
export async function ensureMonths(
  db: Pick<Database, 'sql' | 'kind'>,
  table: PartitionedTable,
  dates: Date[],
): Promise<void> {
  const known = await coverageOf(db.sql, table);
  if (!known.partitioned) return;
  const missing = new Map<number, Date>();
  for (const d of dates) {
    const t = d.getTime();
    if (!known.ranges.some(([from, to]) => t >= from && t < to)) missing.set(monthStart(d).getTime(), monthStart(d));
  }
  if (missing.size === 0) return;
  await db.sql.withExclusiveLock(PARTITION_LOCK_ID, (sql) => createMonths(sql, table, [...missing.values()], db.kind), {
    waitMs: 30_000,
  });
  forgetPartitions(db.sql, table);
}

/**
 * The daily upkeep: the current month and MONTHS_AHEAD after it for every table (readings: the previous one
 * too). Idempotent; returns the partitions it created.
 */
export async function maintainPartitions(db: Pick<Database, 'sql' | 'kind'>, now = new Date()): Promise<string[]> {
  return db.sql.withExclusiveLock(
    PARTITION_LOCK_ID,
    async (sql) => {
      const created: string[] = [];
      for (const table of Object.keys(PARTITIONED) as PartitionedTable[]) {
        const months: Date[] = [];
        for (let k = -MONTHS_BEHIND[table]; k <= MONTHS_AHEAD; k++) months.push(monthStart(now, k));
        created.push(...(await createMonths(sql, table, months, db.kind)));
        forgetPartitions(db.sql, table);
      }
      return created;
    },
    { waitMs: 60_000 },
  );
}

/**
 * Detaches and drops one partition in a transaction under PARTITION_LOCK_TIMEOUT_MS (retried): a catalog change,
 * brief whatever the partition's size. PostgreSQL refuses to detach a month of events a delivery still names.
 */
export async function dropPartition(db: Pick<Database, 'sql' | 'kind'>, table: PartitionedTable, name: string) {
  const ddl = `ALTER TABLE "${table}" DETACH PARTITION "${name}"; DROP TABLE "${name}"`;
  await db.sql.withExclusiveLock(PARTITION_LOCK_ID, async (sql) => {
    for (let attempt = 0; ; attempt++) {
      try {
        if (db.kind === 'pglite') await sql.exec(ddl);
        else await sql.exec(`BEGIN; SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}; ${ddl}; COMMIT`);
        return;
      } catch (err) {
        if (db.kind !== 'pglite') await sql.exec('ROLLBACK').catch(() => {});
        if (!isLockTimeout(err) || attempt >= RETRIES) throw err;
        await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 4_000)));
      }
    }
  });
  forgetPartitions(db.sql, table);
}
