import fc from 'fast-check';

/**
 * fast-check arbitraries from an OpenAPI 3.1 document (JSON Schema 2020-12 dialect), tolerant of
 * whatever a valid document may contain: `$ref`s anywhere (components, nested, recursive), `allOf` /
 * `anyOf` / `oneOf`, `const`, `enum`, type arrays, `prefixItems`, boolean schemas, OpenAPI 3.0 `nullable`.
 * Unknown keywords are ignored; anything not understood generates arbitrary JSON.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any> | boolean;

export function createResolver(doc: Record<string, any>) {
  const cache = new Map<string, unknown>();
  return function resolve<T = any>(node: T, depth = 0): T {
    let current: any = node;
    while (current && typeof current === 'object' && typeof current.$ref === 'string' && depth < 32) {
      const ref: string = current.$ref;
      if (!cache.has(ref)) {
        if (!ref.startsWith('#')) throw new Error(`external $ref not supported by the fuzzer: ${ref}`);
        const target = ref
          .slice(1)
          .split('/')
          .filter(Boolean)
          .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'))
          .reduce((obj: any, key) => obj?.[key], doc);
        cache.set(ref, target);
      }
      // Sibling keywords next to $ref (allowed in 3.1) refine the target.
      const { $ref: _ref, ...siblings } = current;
      current = Object.keys(siblings).length ? { allOf: [cache.get(ref), siblings] } : cache.get(ref);
      depth += 1;
    }
    return current as T;
  };
}

const SAMPLE_STRINGS = fc.constantFrom(
  '',
  'a',
  'Hardy',
  'ABC-123',
  'x'.repeat(300),
  '2024-02-29',
  '2024-02-29T12:00:00Z',
  '0000-01-01',
  '9999-12-31T23:59:59Z',
  'OPEN',
  'true',
  '-1',
  '1e309',
  'NaN',
  '../../etc/passwd',
  '<script>',
  "'; DROP TABLE assets; --",
  'https://127.0.0.1:1/hook',
  '00000000-0000-0000-0000-000000000000',
  'Truck 🚚',
  'ﬀ',
  'İ',
);

const URL_PART = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/);
// Web URLs from a domain, a path and sometimes a query. fast-check's webUrl() builds a table of every code point
// for its percent-encoded characters on first use, which costs a worker more than a fuzz round; the odd strings a
// URL field must refuse come from SAMPLE_STRINGS and the generic strings.
const WEB_URL = fc
  .tuple(fc.constantFrom('https', 'http'), fc.domain(), fc.array(URL_PART, { maxLength: 3 }), fc.option(URL_PART))
  .map(([scheme, host, path, query]) => `${scheme}://${host}/${path.join('/')}${query === null ? '' : `?q=${query}`}`);

// Built once for the run rather than per string schema.
const BY_FORMAT: Record<string, fc.Arbitrary<string>> = {
  'date-time': fc
    .date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  date: fc
    .date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  uuid: fc.uuid(),
  email: fc.emailAddress(),
  uri: WEB_URL,
  url: WEB_URL,
};

function stringArbitrary(s: Record<string, any>): fc.Arbitrary<string> {
  const min = Number.isInteger(s.minLength) ? s.minLength : 0;
  const max = Math.max(min, Math.min(Number.isInteger(s.maxLength) ? s.maxLength : 40, 200));
  const options: fc.Arbitrary<string>[] = [fc.string({ minLength: min, maxLength: max }), SAMPLE_STRINGS];
  if (s.format && BY_FORMAT[s.format]) options.unshift(BY_FORMAT[s.format], BY_FORMAT[s.format]);
  if (typeof s.pattern === 'string') {
    try {
      options.unshift(fc.stringMatching(new RegExp(s.pattern)).map((v) => v.slice(0, 1000)));
    } catch {
      // a pattern fast-check cannot generate from: the generic strings still apply
    }
  }
  return fc.oneof(...options);
}

export function schemaArbitrary(
  schema: Schema | undefined,
  resolve: ReturnType<typeof createResolver>,
  depth = 0,
): fc.Arbitrary<Json> {
  const s = resolve(schema);
  if (s === undefined || s === true || depth > 6) return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  if (s === false || typeof s !== 'object') return fc.constant(null);
  const next = (inner: Schema) => schemaArbitrary(inner, resolve, depth + 1);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum);
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union) && union.length) return fc.oneof(...union.map(next));
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const parts = s.allOf.map((p: Schema) => resolve(p)).filter((p: unknown) => p && typeof p === 'object') as Record<
      string,
      any
    >[];
    const merged: Record<string, any> = { ...s };
    for (const part of parts) {
      merged.type ??= part.type;
      merged.properties = { ...merged.properties, ...part.properties };
      merged.required = [...(merged.required ?? []), ...(part.required ?? [])];
      for (const k of ['format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'items', 'enum', 'const']) {
        if (part[k] !== undefined && merged[k] === undefined) merged[k] = part[k];
      }
    }
    delete merged.allOf;
    return next(merged);
  }
  let types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (s.nullable === true) types = [...types, 'null'];
  if (!types.length) {
    if (s.properties) types = ['object'];
    else if (s.items || s.prefixItems) types = ['array'];
    else return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  }
  return fc.oneof(...types.map((type) => typedArbitrary(type, s, next)));
}

function typedArbitrary(
  type: string,
  s: Record<string, any>,
  next: (inner: Schema) => fc.Arbitrary<Json>,
): fc.Arbitrary<Json> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min =
        typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : -1e6;
      const max =
        typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : 1e6;
      const inRange =
        type === 'integer'
          ? fc.integer({
              min: Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER),
              max: Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER),
            })
          : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      return fc.oneof(inRange, inRange, fc.constantFrom(0, -1, min - 1, max + 1, 1.5, 1e308, -1e308, 2 ** 53));
    }
    case 'string':
      return stringArbitrary(s);
    case 'array': {
      if (Array.isArray(s.prefixItems)) return fc.tuple(...s.prefixItems.map(next));
      const maxLength = Math.min(Number.isInteger(s.maxItems) ? s.maxItems : 4, 4);
      const minLength = Math.min(Number.isInteger(s.minItems) ? s.minItems : 0, maxLength);
      return fc.array(next(s.items ?? true), { minLength, maxLength });
    }
    case 'object': {
      const props: Record<string, any> = s.properties ?? {};
      const keys = Object.keys(props);
      if (!keys.length)
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>, {
          maxKeys: 3,
        });
      const required = (s.required ?? []).filter((k: string) => keys.includes(k));
      return fc.record(Object.fromEntries(keys.map((k) => [k, next(props[k])])), {
        requiredKeys: required,
      }) as fc.Arbitrary<Json>;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  }
}
