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
