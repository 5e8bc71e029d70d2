/**
 * Answers that are made once and then sent many times are marked immutable: frozen all the way down, so nothing
 * can change them, and known to the response serialisers, which check and write an answer marked as a whole once
 * per schema instead of once per response (src/http/response-serializer.ts).
 */
const IMMUTABLE = new WeakSet<object>();

/** Freezes `value` and everything in it, and marks each object and array as immutable. Plain, acyclic data only. */
export function immutable<T>(value: T): T {
  return mark(value, new Set());
}

function mark<T>(value: T, open: Set<object>): T {
  if (typeof value !== 'object' || value === null || IMMUTABLE.has(value)) return value;
  // JSON has no cycles, and the walk would not end.
  if (open.has(value)) throw new TypeError('immutable() takes acyclic data only');
  const proto = Object.getPrototypeOf(value) as unknown;
  // A Date, Map or class instance can change behind a freeze (setTime, set, private state): refused.
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null)
    throw new TypeError('immutable() takes plain objects and arrays only');
  // So can a getter: frozen, it still answers what it likes on every read.
  for (const field of Object.values(Object.getOwnPropertyDescriptors(value)))
    if (field.get || field.set) throw new TypeError('immutable() takes data properties only, not getters or setters');
  open.add(value);
  for (const inner of Object.values(value)) mark(inner, open);
  open.delete(value);
  IMMUTABLE.add(Object.freeze(value));
  return value;
}

/** Whether `value` was marked by immutable() (so its JSON under a given schema never changes). */
export const isImmutable = (value: object): boolean => IMMUTABLE.has(value);
