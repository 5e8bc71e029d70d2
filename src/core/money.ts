import { Decimal } from 'decimal.js';
import { z } from 'zod';

/**
 * Money and quantities as exact decimals, never binary floats: values come in as JSON numbers or PostgreSQL
 * `numeric` text, are summed and multiplied here, and leave as numbers rounded half-up at the edge.
 */
export const Dec = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = InstanceType<typeof Dec>;

export const ZERO = new Dec(0);

/** An exact decimal from a JSON number, a `numeric` string, or another decimal (Prisma's included). */
export const dec = (value: number | string | { toString(): string }): Dec =>
  new Dec(typeof value === 'number' || typeof value === 'string' ? value : value.toString());

export const sum = (values: Iterable<Dec>): Dec => {
  let total = ZERO;
  for (const v of values) total = total.plus(v);
  return total;
};

/** Half-up to `places` decimals (2 for amounts, 3 for a pump's price per unit, 4 for unit costs). */
export const round = (value: Dec, places = 2): Dec => value.toDecimalPlaces(places, Dec.ROUND_HALF_UP);

/** The wire form: a JSON number with at most `places` decimals. */
export const toWire = (value: Dec, places = 2): number => round(value, places).toNumber();

/** The same for a nullable column. */
export const toWireOrNull = (value: Dec | null | undefined, places = 2): number | null =>
  value == null ? null : toWire(value, places);

/** `numeric` text for a parameter of a raw statement, exact whatever the size. */
export const toSql = (value: Dec): string => value.toFixed();

/** How many decimals a JSON number was written with (1e-7 has 7); NaN and infinities count as too many. */
export const decimalPlaces = (n: number): number => (Number.isFinite(n) ? new Dec(n).decimalPlaces() : Infinity);

/**
 * A money-like JSON number: finite, at most `places` decimals, within ±`max`. The zod output stays a number so
 * that the OpenAPI document says `number`; services turn it into a decimal with `dec`.
 */
export const decimalNumber = (places: number, options: { min?: number; max?: number } = {}) => {
  const min = options.min ?? 0;
  const max = options.max ?? 1_000_000_000_000;
  return z
    .number({ error: (i) => (i.input === undefined ? 'is required' : 'must be a number') })
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .refine((n) => decimalPlaces(n) <= places, `must have at most ${places} decimals`);
};

/** An amount of money: at most 2 decimals, not negative unless `min` says so. */
export const moneyAmount = (options: { min?: number; max?: number } = {}) => decimalNumber(2, options);

/** A unit cost: at most 4 decimals. */
export const unitCost = (options: { min?: number; max?: number } = {}) => decimalNumber(4, options);
