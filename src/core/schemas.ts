import { z } from 'zod';

/** Shared wire shapes. Response schemas are allow-lists: fields not declared never leave the server. */
export const ErrorResponse = z
  .object({
    ok: z.literal(false),
    error: z
      .string()
      .describe('Machine-readable error code, e.g. not_found, validation_failed, missing_scope:assets:read'),
    message: z.string().optional().describe('Human-readable explanation'),
    fieldErrors: z.record(z.string(), z.string()).optional().describe('Field name to message (422)'),
    retryAfterSec: z.number().int().optional().describe('Seconds until the rate-limit window resets (429)'),
    requestId: z.string().optional().describe('Quote it when reporting a server error (5xx)'),
  })
  .meta({ id: 'Error' });

// No length cap: an id of any length that is not found is a 404, as the spec says for unknown ids.
export const IdParams = z.object({ id: z.string().min(1) });

export const dateTime = () => z.iso.datetime({ offset: true }).describe('ISO 8601 date-time (UTC on output)');
/** Dates PostgreSQL and ISO 8601 output both handle: years 1 to 9999 (year 0000 would be a 500 otherwise). */
export const isStorableDate = (d: Date) =>
  !Number.isNaN(d.getTime()) && d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999;

/** Accepts ISO 8601 date-times with an offset or Z, and plain dates (midnight UTC). */
export const dateTimeInput = () =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()])
    .transform((s) => new Date(s))
    .refine(isStorableDate, 'must be a date between the years 1 and 9999');

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** Trimmed optional text; an empty string after trimming is stored as null. */
export const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .nullable()
    .optional()
    .transform((s) => (s == null ? s : s.trim() === '' ? null : s.trim()));

export const requiredText = (max: number) =>
  z
    .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'cannot be blank')
    .max(max);

export const limitQuery = z.coerce
  .number()
  .int()
  .optional()
  .transform((n) => Math.min(Math.max(n ?? 50, 1), 200))
  .describe('Page size, default 50; values outside 1-200 are clamped');

export const cursorQuery = z.string().max(1000).optional().describe('The nextCursor of the previous page');

/** CSV filter: unknown values are ignored (spec rule), an empty result falls back to the default. */
export function csvEnum<const T extends readonly [string, ...string[]]>(values: T, fallback: readonly T[number][]) {
  const allowed = new Set<string>(values);
  return z
    .string()
    .optional()
    .transform((s) => {
      const picked = (s ?? '')
        .split(',')
        .map((v) => v.trim().toUpperCase())
        .filter((v): v is T[number] => allowed.has(v));
      return picked.length > 0 ? [...new Set(picked)] : [...fallback];
    })
    .describe(`Comma-separated subset of ${values.join(', ')}; unknown values are ignored`);
}

export const okTrue = z.literal(true);
