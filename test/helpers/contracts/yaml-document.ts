import { parse } from 'yaml';

const parsed = new Map<string, unknown>();
/** Distinct documents kept per test process (the served OpenAPI and AsyncAPI documents, and the committed ones). */
const KEEP = 4;

/**
 * parse() of a YAML document, once per text in a test process: the OpenAPI document takes most of a second to
 * parse, and several test files read the same one. Each caller gets a copy of its own.
 */
export function parseYaml<T = any>(text: string): T {
  let doc = parsed.get(text);
  if (doc === undefined) {
    doc = parse(text);
    parsed.set(text, doc);
    if (parsed.size > KEEP) parsed.delete(parsed.keys().next().value!);
  }
  return structuredClone(doc) as T;
}
