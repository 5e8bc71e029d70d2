/**
 * The one rule for text the database cannot store, applied to every input of /api/v1 (path, query,
 * body, Idempotency-Key) before validation: NUL characters (PostgreSQL text refuses them) and lone
 * UTF-16 surrogates (not valid Unicode; jsonb refuses them and text columns would silently turn them
 * into U+FFFD) are refused with 422 naming the field. Nesting is bounded, and the walk is iterative, so
 * no input can overflow the stack here or in anything that recurses over the body later.
 */
export const MAX_NESTING_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (LONE_SURROGATE.test(text)) return 'must not contain unpaired UTF-16 surrogates (invalid Unicode)';
  return null;
}

/** The first problem in `value` as [field path, message], or null. `root` names the value itself. */
export function findInputProblem(value: unknown, root: string): [string, string] | null {
  // Most requests have no body and empty params or query: no walk for those.
  if (value === undefined || value === null) return null;
  if (typeof value === 'object' && isEmpty(value)) return null;
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return [path || 'body', problem];
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_NESTING_DEPTH)
      return [path || 'body', `is nested too deeply (at most ${MAX_NESTING_DEPTH} levels)`];
    const entries = Object.entries(v);
    // Pushed in reverse so the first field in document order is reported first.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i];
      const innerPath = path ? `${path}.${key}` : key;
      const keyProblem = textProblem(key);
      if (keyProblem) return [path || 'body', `has a property name that ${keyProblem}`];
      stack.push({ value: inner, path: innerPath, depth: depth + 1 });
    }
  }
  return null;
}

function isEmpty(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/**
 * Cuts text to at most `max` UTF-16 units without splitting a surrogate pair: a plain slice could leave
 * half an emoji behind, i.e. create the very lone surrogate the rule above refuses.
 */
export function clampText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.charCodeAt(max - 1) >= 0xd800 && text.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return text.slice(0, cut);
}
