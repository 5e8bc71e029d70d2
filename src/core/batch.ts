import { z } from 'zod';
import { badRequest, type FieldErrors } from './errors.ts';
import { zodFieldErrors } from './validation.ts';

/**
 * Batch envelope: a JSON array of entries, or `{ entries: [...] }`. Envelope problems are 400
 * (invalid_envelope, empty_batch, batch_too_large); entry problems are reported per entry.
 */
export function readBatchEnvelope(body: unknown, cap: number): unknown[] {
  const entries = Array.isArray(body)
    ? body
    : body && typeof body === 'object' && 'entries' in body
      ? (body as { entries: unknown }).entries
      : undefined;
  if (!Array.isArray(entries)) {
    throw badRequest('invalid_envelope', 'Send a JSON array of entries, or an object {"entries": [...]}');
  }
  if (entries.length === 0) throw badRequest('empty_batch', 'The batch has no entries');
  if (entries.length > cap)
    throw badRequest('batch_too_large', `A batch holds at most ${cap} entries; got ${entries.length}`);
  return entries;
}

/** One entry of a batch response's `results` (as the service builds it). */
export type BatchResultOf<T extends z.ZodType> = z.input<T> extends { results: (infer R)[] } ? R : never;

export interface BatchFailure {
  index: number;
  ok: false;
  error: 'validation_failed';
  fieldErrors: FieldErrors;
  formError?: string;
}

/** Validates each entry on its own; returns the valid ones (with their index) and the failures. */
export function validateEntries<S extends z.ZodType>(entries: unknown[], schema: S) {
  const valid: { index: number; data: z.output<S> }[] = [];
  const failures: BatchFailure[] = [];
  entries.forEach((entry, index) => {
    const parsed = schema.safeParse(entry);
    if (parsed.success) valid.push({ index, data: parsed.data });
    else
      failures.push({ index, ok: false, error: 'validation_failed', fieldErrors: zodFieldErrors(parsed.error.issues) });
  });
  return { valid, failures };
}

export function batchSummary(received: number, results: { ok: boolean }[]) {
  const succeeded = results.filter((r) => r.ok).length;
  return { received, succeeded, failed: received - succeeded };
}

/**
 * Route options of a batch endpoint. The body is documented as up to `cap` entries of `entry`, as an array or
 * as {entries}, but the route does not validate it: the service checks the envelope (the spec's 400 codes)
 * and each entry on its own (per-entry results), which a route-level 422 would pre-empt.
 */
export function batchRoute<S extends z.ZodType>(entry: S, cap: number) {
  const entries = z.array(entry).max(cap);
  return {
    // `x-batch-cap` tells the contract generator to publish entries as open (src/contracts/openapi-rules.ts).
    body: z
      .union([entries, z.object({ entries })])
      .describe(`Up to ${cap} entries, as an array or as {"entries": [...]}; each succeeds or fails on its own`)
      .meta({ 'x-batch-cap': cap }),
    validatorCompiler: () => (data: unknown) => ({ value: data }),
  };
}

const fieldErrors = z.record(z.string(), z.string()).describe('Field name to message');
const BatchSummary = z
  .object({ received: z.number().int(), succeeded: z.number().int(), failed: z.number().int() })
  .meta({ id: 'BatchSummary' });

/**
 * Response of a batch endpoint: `results[]` parallel to the input, each a success (`ok: true` and the created
 * ids) or a failure (`ok: false`, `validation_failed`, fieldErrors), discriminated on `ok` so typed clients can
 * narrow an entry. Named `<Resource>BatchSuccess` / `<Resource>BatchFailure` in the OpenAPI document.
 */
export function batchResponse<S extends z.ZodRawShape, F extends z.ZodRawShape = Record<never, never>>(
  resource: string,
  success: S,
  failureExtra?: F,
) {
  const index = z.number().int().min(0).describe('Position of the entry in the request');
  const Success = z.object({ index, ok: z.literal(true), ...success }).meta({ id: `${resource}BatchSuccess` });
  const Failure = z
    .object({
      index,
      ok: z.literal(false),
      error: z.string().describe('validation_failed'),
      fieldErrors,
      ...(failureExtra ?? ({} as F)),
    })
    .meta({ id: `${resource}BatchFailure` });
  return z
    .object({
      ok: z.literal(true),
      results: z.array(z.discriminatedUnion('ok', [Success, Failure])),
      summary: BatchSummary,
    })
    .describe('One result per entry, in input order; the batch itself succeeds even when entries fail');
}
