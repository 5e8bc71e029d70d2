// The online conversion of an installation's meter_logs, events and webhook_deliveries into monthly partitions
// (docs/adr/0081-partition-conversion-attaches-the-table.md): each table becomes the partition of all its history
// up to a bound, behind a validated CHECK, so that the attach reads nothing. Every step is recognised from the
// catalog and idempotent, so an interrupted run resumes; every DDL statement runs under a lock timeout with retries,
// so no writer waits longer than that behind it.
import type { SqlRunner } from './database.ts';
import { monthStart, MONTHS_AHEAD, type PartitionedTable } from './partitions.ts';

/** Held by a conversion run: a second one waits instead of racing it. */
export const PARTITION_CONVERSION_LOCK_ID = 72_707_361;
const BATCH = 10_000;
const RETRIES = 20;

interface Spec {
  table: PartitionedTable;
  key: string;
  /** Unique indexes of the partitioned form that the table lacks: built CONCURRENTLY before the swap. */
  build: { name: string; columns: string; unique: boolean }[];
  /** Indexes of the table the partitioned form replaces (their unique keys lack the partition key). */
  replaced: string[];
}

const SPECS: Spec[] = [
  {
    table: 'events',
    key: 'createdAt',
    build: [{ name: 'events_id_createdAt_key', columns: '(id, "createdAt")', unique: true }],
    replaced: [],
  },
  {
    table: 'webhook_deliveries',
    key: 'createdAt',
    build: [
      { name: 'webhook_deliveries_id_createdAt_key', columns: '(id, "createdAt")', unique: true },
      {
        name: 'webhook_deliveries_subscriptionId_eventId_createdAt_key',
        columns: '("subscriptionId", "eventId", "createdAt")',
        unique: true,
      },
      {
        name: 'webhook_deliveries_eventCreatedAt_eventId_idx',
        columns: '("eventCreatedAt", "eventId")',
        unique: false,
      },
    ],
    replaced: ['webhook_deliveries_subscriptionId_eventId_key'],
  },
  {
    table: 'meter_logs',
    key: 'loggedAt',
    build: [
      { name: 'meter_logs_id_loggedAt_key', columns: '(id, "loggedAt")', unique: true },
      {
        name: 'meter_logs_orgId_clientMutationId_loggedAt_key',
        columns: '("orgId", "clientMutationId", "loggedAt")',
        unique: true,
      },
    ],
    replaced: ['meter_logs_orgId_clientMutationId_key'],
  },
];

export interface ConversionProgress {
  table: string;
  step: string;
  detail?: string;
}

export interface ConversionOptions {
  now?: Date;
  onProgress?: (p: ConversionProgress) => void;
  /** Stops after the named step of a table (tests of resumption): `${table}:${step}`. */
  stopAfter?: string;
}

export class ConversionStopped extends Error {}

/** A lock not had in time, or a deadlock the server broke by cancelling this side: tried again. */
const isLockTimeout = (err: unknown) => ['55P03', '40P01'].includes((err as { code?: string }).code ?? '');
/** Shorter than the service's partition upkeep: a writer queued behind a waiting swap waits at most this. */
export const CONVERSION_LOCK_TIMEOUT_MS = 300;

/** Runs `text` (one or more statements) in a transaction under the lock timeout, retried on a lock timeout. */
async function ddl(sql: SqlRunner, text: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await sql.exec(`BEGIN; SET LOCAL lock_timeout = ${CONVERSION_LOCK_TIMEOUT_MS}; ${text}; COMMIT`);
      return;
    } catch (err) {
      await sql.exec('ROLLBACK').catch(() => {});
      if (!isLockTimeout(err) || attempt >= RETRIES) throw err;
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 3_000)));
    }
  }
}

/** Statements that cannot run in a transaction (CONCURRENTLY), under a session lock timeout, retried. */
async function online(sql: SqlRunner, text: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await sql.exec(`SET lock_timeout = ${CONVERSION_LOCK_TIMEOUT_MS}`);
      await sql.exec(text);
      return;
    } catch (err) {
      if (!isLockTimeout(err) || attempt >= RETRIES) throw err;
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 3_000)));
    } finally {
      await sql.exec('RESET lock_timeout').catch(() => {});
    }
  }
}

const one = async <T>(sql: SqlRunner, text: string, params: unknown[] = []) => (await sql.query<T>(text, params))[0];

const relkind = async (sql: SqlRunner, name: string) =>
  (await one<{ k: string | null }>(
    sql,
    `SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1)) AS k`,
    [`public.${name}`],
  ))!.k;

const constraintDef = async (sql: SqlRunner, table: string, name: string) =>
  (await one<{ name: string; def: string; valid: boolean }>(
    sql,
    `SELECT conname AS name, pg_get_constraintdef(oid) AS def, convalidated AS valid FROM pg_constraint
       WHERE conrelid = to_regclass($1) AND conname = $2`,
    [`public.${table}`, name],
  )) ?? null;

/** Whether the three tables still wait for the conversion. */
export async function conversionPending(sql: SqlRunner): Promise<PartitionedTable[]> {
  const pending: PartitionedTable[] = [];
  for (const s of SPECS) if ((await relkind(sql, s.table)) === 'r') pending.push(s.table);
  return pending;
}

/**
 * Converts every table still unpartitioned: events, then deliveries (whose reference to events then names the
 * partition key), then meter logs. The bound between the attached history and the first monthly partition is the
 * first day of the month after next, kept in each table's CHECK constraint so that a resumed run uses the same.
 */
export async function convertToPartitions(sql: SqlRunner, options: ConversionOptions = {}): Promise<string[]> {
  const converted: string[] = [];
  // A resumed run keeps the bound of the first: any table's history check names it.
  const existing = await one<{ def: string }>(
    sql,
    `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = ANY ($1) LIMIT 1`,
    [SPECS.map((s) => `${s.table}_history_bound`)],
  );
  const bound = existing ? boundOf(existing.def) : monthStart(options.now ?? new Date(), 2);
  if ((await relkind(sql, 'webhook_deliveries')) === 'r') await fillEventCreatedAt(sql, options);
  for (const spec of SPECS) {
    if ((await relkind(sql, spec.table)) !== 'r') {
      // Converted by a run that stopped before its months were all there.
      if ((await relkind(sql, `${spec.table}_legacy`)) === 'r') await monthsFrom(sql, spec.table, bound);
      continue;
    }
    await convertTable(sql, spec, bound, options);
    converted.push(spec.table);
  }
  return converted;
}

/** The months from the bound, each attached on its own (writes go on): the legacy partition takes rows until then. */
async function monthsFrom(sql: SqlRunner, table: string, bound: Date) {
  for (let k = 0; k <= MONTHS_AHEAD; k++) {
    await ddl(sql, `SELECT fleet_month_partition('${table}', '${monthStart(bound, k).toISOString()}'::timestamptz)`);
  }
}

const boundOf = (def: string) => new Date(/'([^']+)'/.exec(def)![1]);

async function convertTable(sql: SqlRunner, spec: Spec, bound: Date, options: ConversionOptions) {
  const { table, key } = spec;
  const step = (name: string, detail?: string) => {
    options.onProgress?.({ table, step: name, detail });
    if (options.stopAfter === `${table}:${name}`) throw new ConversionStopped(`stopped after ${table}:${name}`);
  };
  // 1. The unique keys of the partitioned form, built without blocking writes (an interrupted build is dropped).
  for (const ix of spec.build) {
    const state = await one<{ valid: boolean }>(
      sql,
      `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
      [`public."${ix.name}"`],
    );
    if (state && !state.valid) await online(sql, `DROP INDEX CONCURRENTLY IF EXISTS "${ix.name}"`);
    if (!state?.valid) {
      await online(
        sql,
        `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX CONCURRENTLY IF NOT EXISTS "${ix.name}" ON "${table}" ${ix.columns}`,
      );
    }
  }
  step('indexes');
  // 2. Deliveries name their event's partition key (filled before events were swapped): NOT NULL, validated.
  if (table === 'webhook_deliveries') {
    await ensureValidCheck(sql, table, 'webhook_deliveries_event_created_at_set', `"eventCreatedAt" IS NOT NULL`);
    // A run stopped between the events' swap and the check of their reference left it NOT VALID.
    const ref = await constraintDef(sql, table, 'webhook_deliveries_eventId_eventCreatedAt_fkey');
    if (ref && !ref.valid) await online(sql, `ALTER TABLE "${table}" VALIDATE CONSTRAINT "${ref.name}"`);
  }
  // 3. Every row lies before the bound: a validated CHECK (its scan takes SHARE UPDATE EXCLUSIVE: writes go on).
  await ensureValidCheck(sql, table, `${table}_history_bound`, `"${key}" < '${bound.toISOString()}'::timestamptz`);
  step('check');
  // 4. The swap, in one short transaction.
  await ddl(sql, await swapStatements(sql, spec, bound));
  step('swap');
  await monthsFrom(sql, table, bound);
  if (table === 'events') {
    // The deliveries' reference, added NOT VALID in the swap, is checked with writes going on.
    await online(
      sql,
      `ALTER TABLE webhook_deliveries VALIDATE CONSTRAINT "webhook_deliveries_eventId_eventCreatedAt_fkey"`,
    );
    step('reference');
  }
}

/**
 * Deliveries written before the column existed get their event's createdAt, in batches in primary-key order (each
 * batch reads its own rows; one probe of events' key per row). The trigger fills every row written meanwhile.
 */
async function fillEventCreatedAt(sql: SqlRunner, options: ConversionOptions) {
  let filled = 0;
  for (let last = ''; ;) {
    const [batch] = await sql.query<{ n: number; last: string | null }>(
      `WITH b AS (SELECT id FROM webhook_deliveries WHERE id > $1 ORDER BY id LIMIT ${BATCH}),
       u AS (UPDATE webhook_deliveries d
             SET "eventCreatedAt" = (SELECT e."createdAt" FROM events e WHERE e.id = d."eventId" LIMIT 1)
             FROM b WHERE d.id = b.id AND d."eventCreatedAt" IS NULL RETURNING 1)
       SELECT (SELECT count(*)::int FROM u) AS n, (SELECT max(id) FROM b) AS last`,
      [last],
    );
    filled += batch.n;
    if (batch.last === null) break;
    last = batch.last;
  }
  options.onProgress?.({ table: 'webhook_deliveries', step: 'event-created-at', detail: `${filled} rows` });
  if (options.stopAfter === 'webhook_deliveries:event-created-at') throw new ConversionStopped('stopped');
}

async function ensureValidCheck(sql: SqlRunner, table: string, name: string, predicate: string) {
  const c = await constraintDef(sql, table, name);
  if (!c) await ddl(sql, `ALTER TABLE "${table}" ADD CONSTRAINT "${name}" CHECK (${predicate}) NOT VALID`);
  if (!c?.valid) await online(sql, `ALTER TABLE "${table}" VALIDATE CONSTRAINT "${name}"`);
}

/**
 * Renames the table to <table>_legacy (its indexes to <table>_legacy_<n>), creates the partitioned table under the
 * old name with the legacy table's columns, defaults, indexes, foreign keys and triggers, and attaches the legacy
 * table for everything before the bound: catalog changes only, under ACCESS EXCLUSIVE for their milliseconds.
 */
async function swapStatements(sql: SqlRunner, spec: Spec, bound: Date): Promise<string> {
  const { table, key } = spec;
  const legacy = `${table}_legacy`;
  const indexes = await sql.query<{ name: string; def: string; primary: boolean }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisprimary AS primary
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass($1) ORDER BY c.relname`,
    [`public.${table}`],
  );
  const fks = await sql.query<{ name: string; def: string }>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
     WHERE conrelid = to_regclass($1) AND contype = 'f' AND conparentid = 0 ORDER BY conname`,
    [`public.${table}`],
  );
  const triggers = await sql.query<{ name: string; def: string }>(
    `SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger
     WHERE tgrelid = to_regclass($1) AND NOT tgisinternal ORDER BY tgname`,
    [`public.${table}`],
  );
  const pkey = indexes.find((i) => i.primary);
  const idKey = spec.build[0].name;
  // Locks in the order writers take them (an event, then its deliveries), so that no writer deadlocks with the swap.
  const out: string[] = [
    table === 'webhook_deliveries'
      ? `LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE; LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE`
      : table === 'events'
        ? `LOCK TABLE events, webhook_deliveries IN ACCESS EXCLUSIVE MODE`
        : `LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`,
  ];
  if (table === 'events') {
    out.push(`ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS "webhook_deliveries_eventId_fkey"`);
  }
  out.push(`ALTER TABLE "${table}" RENAME TO "${legacy}"`);
  if (pkey) out.push(`ALTER TABLE "${legacy}" DROP CONSTRAINT "${pkey.name}"`);
  for (const r of spec.replaced) out.push(`DROP INDEX IF EXISTS "${r}"`);
  const kept = indexes.filter((i) => !i.primary && !spec.replaced.includes(i.name));
  kept.forEach((i, n) => out.push(`ALTER INDEX "${i.name}" RENAME TO "${legacy}_${n}"`));
  out.push(
    `ALTER TABLE "${legacy}" ADD CONSTRAINT "${legacy}_pkey" PRIMARY KEY USING INDEX "${legacy}_${kept.findIndex((i) => i.name === idKey)}"`,
  );
  if (table === 'webhook_deliveries') out.push(`ALTER TABLE "${legacy}" ALTER COLUMN "eventCreatedAt" SET NOT NULL`);
  for (const t of triggers) out.push(`DROP TRIGGER "${t.name}" ON "${legacy}"`);

  out.push(`CREATE TABLE "${table}" (LIKE "${legacy}" INCLUDING DEFAULTS) PARTITION BY RANGE ("${key}")`);
  out.push(`ALTER TABLE "${table}" ADD CONSTRAINT "${table}_pkey" PRIMARY KEY (id, "${key}")`);
  for (const i of kept.filter((x) => x.name !== idKey)) {
    out.push(i.def.replace(/ ON (public\.)?\S+ USING /, ` ON "${table}" USING `));
  }
  for (const f of fks) {
    const def =
      table === 'webhook_deliveries' && f.name === 'webhook_deliveries_eventId_eventCreatedAt_fkey'
        ? f.def.replace(' NOT VALID', '')
        : f.def;
    out.push(`ALTER TABLE "${table}" ADD CONSTRAINT "${f.name}" ${def}`);
  }
  for (const t of triggers) out.push(t.def.replace(/ ON (public\.)?\S+ /, ` ON "${table}" `));
  out.push(
    `ALTER TABLE "${table}" ATTACH PARTITION "${legacy}" FOR VALUES FROM (MINVALUE) TO ('${bound.toISOString()}')`,
  );
  if (table === 'events') {
    out.push(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT "webhook_deliveries_eventId_eventCreatedAt_fkey"
       FOREIGN KEY ("eventId", "eventCreatedAt") REFERENCES events (id, "createdAt") ON DELETE CASCADE ON UPDATE CASCADE NOT VALID`,
    );
  }
  return out.join(';\n');
}
