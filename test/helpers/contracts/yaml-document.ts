import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { cachedBuild } from '../run/build-cache.ts';

const parsed = new Map<string, unknown>();
/** Distinct documents kept per test process (the served OpenAPI and AsyncAPI documents, and the committed ones). */
const KEEP = 4;

/**
 * parse() of a YAML document, once per text: the OpenAPI document takes most of a second to parse and several test
 * files in every run read the same one, so its parse is kept as JSON between runs and in each test process. The
 * parse of a text never changes, so the cache is keyed on the text alone. Each caller gets a copy of its own.
 */
export function parseYaml<T = any>(text: string): T {
  let doc = parsed.get(text);
  if (doc === undefined) {
    doc = parseCached(text);
    parsed.set(text, doc);
    if (parsed.size > KEEP) parsed.delete(parsed.keys().next().value!);
  }
  return structuredClone(doc) as T;
}

function parseCached(text: string): unknown {
  const key = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const dir = cachedBuild('fleet-test-yaml', key, (work) =>
    writeFileSync(path.join(work, 'document.json'), JSON.stringify(parse(text))),
  );
  return JSON.parse(readFileSync(path.join(dir, 'document.json'), 'utf8'));
}
