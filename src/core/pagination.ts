import { ValidationError } from './errors.ts';
import { isStorableDate } from './schemas.ts';

type CursorValue = string | number | null;

/** Opaque cursors: base64url of the last row's sort key and id. */
export function encodeCursor(values: CursorValue[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, arity: number): CursorValue[] | null {
  if (cursor === undefined || cursor === '') return null;
  try {
    const values: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(values) &&
      values.length === arity &&
      values.every((v) => v === null || typeof v === 'string' || typeof v === 'number')
    ) {
      return values as CursorValue[];
    }
  } catch {
    // fall through to the validation error
  }
  throw badCursor();
}

/** Splits a `limit + 1` fetch into the page and the cursor for the next one. */
export function paginate<T>(rows: T[], limit: number, keyOf: (row: T) => CursorValue[]) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  return { page, nextCursor: hasMore ? encodeCursor(keyOf(page[page.length - 1])) : null };
}

const badCursor = () => new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });

/** A (time, id) cursor as decoded; a hand-made one with other types or an unstorable date is 422, not 500. */
export function timeIdCursor(values: CursorValue[] | null): [Date, string] | null {
  if (!values) return null;
  const [time, id] = values;
  const at = typeof time === 'string' ? new Date(time) : new Date(NaN);
  if (typeof id !== 'string' || !isStorableDate(at)) throw badCursor();
  return [at, id];
}

/** Keyset condition for "createdAt desc, id desc" (newest first) after the given cursor. */
export function newestFirstAfter(cursor: CursorValue[] | null) {
  const after = timeIdCursor(cursor);
  if (!after) return {};
  const [at, id] = after;
  return { OR: [{ createdAt: { lt: at } }, { createdAt: at, id: { lt: id } }] };
}

export const newestFirstOrder = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];
export const newestFirstKey = (row: { createdAt: Date; id: string }) => [row.createdAt.toISOString(), row.id];

/** One column of a keyset order; `cast` types the cursor parameter (e.g. timestamptz). */
export interface KeysetColumn {
  column: string;
  cast?: string;
}

/**
 * One page of a keyset list, as SQL for the driver. Prisma can only write a cursor as
 * `a < X OR (a = X AND id < Y)`, which the planner cannot turn into an index range: it walks the
 * organisation's rows from the top and filters, so page 500 costs 500 pages. A row-value predicate
 * `(a, id) < ($1, $2)` on an index whose columns match the order starts the scan at the cursor.
 *
 * `split` serves a filter on an enum that leads the index after the tenant (e.g. `status IN (...)`): a
 * proper subset becomes one index range per value, each limited to the page, merged and cut to the page,
 * so a page reads at most values x page rows whatever the organisation's size. Covering every value, the
 * filter is dropped when `all` is given (the list then reads its plain tenant index); without `all`, every
 * value is its own range.
 */
export interface KeysetQuery {
  from: string;
  select?: string;
  /** Conditions joined with AND; `$n` placeholders number into `params`. */
  where: string[];
  params: unknown[];
  order: KeysetColumn[];
  direction: 'asc' | 'desc';
  after: unknown[] | null;
  /**
   * Instead of `after`: a subquery returning the cursor row's order columns (a cursor that names a row, e.g. an
   * event id), so the lookup is an InitPlan of the page's statement instead of a round trip of its own.
   */
  afterRow?: string;
  /** Rows to fetch (the page size plus one). */
  take: number;
  split?: { column: string; values: readonly string[]; all?: readonly string[] };
}

export function keysetSql(q: KeysetQuery): { text: string; params: unknown[] } {
  const params = [...q.params];
  const bind = (value: unknown, cast?: string) => {
    params.push(value);
    return cast ? `$${params.length}::${cast}` : `$${params.length}`;
  };
  const conditions = [...q.where];
  if (q.after || q.afterRow) {
    const columns = q.order.map((c) => c.column).join(', ');
    const values = q.afterRow ?? q.order.map((c, i) => bind(q.after![i], c.cast)).join(', ');
    conditions.push(`(${columns}) ${q.direction === 'desc' ? '<' : '>'} (${values})`);
  }
  const dir = q.direction === 'desc' ? 'DESC' : 'ASC';
  const orderBy = `ORDER BY ${q.order.map((c) => `${c.column} ${dir}`).join(', ')}`;
  const limit = bind(q.take);
  const select = q.select ?? '*';
  const split = q.split;
  const values = split ? [...new Set(split.values)] : [];
  if (!split || (split.all && split.all.every((v) => values.includes(v)))) {
    return {
      text: `SELECT ${select} FROM ${q.from} WHERE ${conditions.join(' AND ')} ${orderBy} LIMIT ${limit}`,
      params,
    };
  }
  if (values.length === 0) return { text: `SELECT ${select} FROM ${q.from} WHERE false`, params };
  const branches = values.map(
    (v) =>
      `(SELECT ${select} FROM ${q.from} WHERE ${[...conditions, `${split.column} = ${bind(v)}`].join(' AND ')} ${orderBy} LIMIT ${limit})`,
  );
  if (branches.length === 1) return { text: branches[0].slice(1, -1), params };
  return { text: `SELECT * FROM (${branches.join(' UNION ALL ')}) AS page ${orderBy} LIMIT ${limit}`, params };
}

/**
 * `column IN ($a::type, ...)` for a proper subset of an enum's values; nothing when it covers them all. One
 * parameter per value (not an array parameter): PGlite and pg serialise scalars the same way.
 */
export function enumFilter(
  where: string[],
  params: unknown[],
  column: string,
  type: string,
  values: readonly string[],
  all: readonly string[],
) {
  if (all.every((v) => values.includes(v))) return;
  where.push(enumIn(params, column, type, values));
}

/** `column IN ($a::type, ...)`, or `false` for no values; pushes the values onto params. */
export function enumIn(params: unknown[], column: string, type: string, values: readonly string[]): string {
  if (values.length === 0) return 'false';
  return `${column} IN (${values.map((v) => `$${params.push(v)}::"${type}"`).join(', ')})`;
}

/** The (createdAt, id) order most lists use, newest first. */
export const NEWEST_FIRST: KeysetColumn[] = [{ column: '"createdAt"', cast: 'timestamptz' }, { column: 'id' }];
