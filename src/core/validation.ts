import type { FieldErrors } from './errors.ts';

interface IssueLike {
  path: PropertyKey[];
  message: string;
}

/** Zod issues to the spec's fieldErrors (dotted path -> first message); the body itself is `body`. */
export function zodFieldErrors(issues: readonly IssueLike[], rootName = 'body'): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of issues) {
    const key = issue.path.length ? issue.path.map(String).join('.') : rootName;
    out[key] ??= issue.message;
  }
  return out;
}
