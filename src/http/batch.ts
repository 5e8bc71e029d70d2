import { z } from 'zod';
import { badRequest, type FieldErrors } from './errors.ts';
import { zodFieldErrors } from './validation.ts';

/**
 * Batch envelope: a JSON array of entries, or `{ entries: [...] }`. Envelope problems are 400
 * (invalid_envelope, empty_batch, batch_too_large); entry problems are reported per entry.
 */
export function readBatchEnvelope(body: unknown, cap: number): unknown[] {
  const entries =
    Array.isArray(body) ? body : body && typeof body === 'object' && 'entries' in body ? (body as { entries: unknown }).entries : undefined;
  if (!Array.isArray(entries)) {
    throw badRequest('invalid_envelope', 'Send a JSON array of entries, or an object {"entries": [...]}');
  }
  if (entries.length === 0) throw badRequest('empty_batch', 'The batch has no entries');
  if (entries.length > cap) throw badRequest('batch_too_large', `A batch holds at most ${cap} entries; got ${entries.length}`);
  return entries;
}

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
    else failures.push({ index, ok: false, error: 'validation_failed', fieldErrors: zodFieldErrors(parsed.error.issues) });
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
    body: z.union([entries, z.object({ entries })]).describe(`Up to ${cap} entries, as an array or as {"entries": [...]}; each succeeds or fails on its own`),
    validatorCompiler: () => (data: unknown) => ({ value: data }),
  };
}
