import type { FastifySerializerCompiler } from 'fastify';
import { safeParse, type $ZodType } from 'zod/v4/core';
import { ResponseSerializationError } from 'fastify-type-provider-zod';

/**
 * Response serialisers compiled once per route and status from the zod schema: one pass over the payload that
 * checks it against the schema and writes the JSON, instead of zod's parse (a copy of the whole payload) and
 * then JSON.stringify on every response. Same output, same guarantees: response schemas are allow-lists (only
 * declared fields are written, in the schema's order, as zod's parse writes them) and a payload that does not
 * match its schema is a 500. Whenever the fast path meets something it does not accept, zod decides: its result
 * is sent, or its error raised (ResponseSerializationError, as fastify-type-provider-zod raises it). A schema
 * using anything beyond plain data (transforms, defaults, unions, refinements, loose objects...) is not
 * compiled at all and keeps zod's serialiser.
 */

type Ser = ((value: unknown) => string) & { exact(value: unknown): boolean };

/** Thrown by a compiled serialiser when the payload is not what it accepts; zod then has the last word. */
const MISMATCH = Symbol('mismatch');

// String formats whose whole check is their pattern (zod's $ZodStringFormat tests def.pattern and nothing else).
const PATTERN_FORMATS = new Set([
  'datetime',
  'date',
  'time',
  'email',
  'uuid',
  'guid',
  'cuid',
  'cuid2',
  'ulid',
  'regex',
]);

interface Def {
  type: string;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  [key: string]: unknown;
}
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

function fail(): never {
  throw MISMATCH;
}

type Test = (v: never) => boolean;

function patternTest(pattern: unknown): Test | null {
  if (!(pattern instanceof RegExp)) return null;
  return (v: string) => {
    pattern.lastIndex = 0;
    return pattern.test(v);
  };
}

function stringChecks(def: Def): Test[] | null {
  const tests: Test[] = [];
  if (def.format !== undefined) {
    const t = PATTERN_FORMATS.has(def.format as string) ? patternTest(def.pattern) : null;
    if (!t) return null;
    tests.push(t);
  }
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'min_length') tests.push((v: string) => v.length >= (c.minimum as number));
    else if (c.check === 'max_length') tests.push((v: string) => v.length <= (c.maximum as number));
    else if (c.check === 'length_equals') tests.push((v: string) => v.length === (c.length as number));
    else if (c.check === 'string_format' && PATTERN_FORMATS.has(c.format as string) && patternTest(c.pattern))
      tests.push(patternTest(c.pattern)!);
    else return null;
  }
  return tests;
}

function numberChecks(def: Def): Test[] | null {
  const tests: Test[] = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    const bound = c.value as number;
    if (c.check === 'number_format' && c.format === 'safeint') tests.push((v: number) => Number.isSafeInteger(v));
    else if (c.check === 'greater_than') tests.push(c.inclusive ? (v: number) => v >= bound : (v: number) => v > bound);
    else if (c.check === 'less_than') tests.push(c.inclusive ? (v: number) => v <= bound : (v: number) => v < bound);
    else return null;
  }
  return tests;
}

const all = (tests: Test[], v: never) => {
  for (const t of tests) if (!t(v)) return false;
  return true;
};

/**
 * A serialiser for the schema, or null when it uses anything this compiler does not reproduce exactly. Each also
 * has `exact`: true when the value is valid and JSON.stringify would write it exactly as the serialiser does (plain
 * objects holding only declared keys, in the schema's order), so the common case is one check and the engine's own
 * JSON.stringify, with no string built piece by piece.
 */
function compile(schema: unknown): Ser | null {
  const def = defOf(schema);
  const leaf = (accept: (v: unknown) => boolean, write: (v: unknown) => string) =>
    Object.assign((v: unknown) => (accept(v) ? write(v) : fail()), { exact: accept });
  switch (def.type) {
    case 'string': {
      if (def.coerce) return null;
      const tests = stringChecks(def);
      if (!tests) return null;
      return leaf((v) => typeof v === 'string' && all(tests, v as never), JSON.stringify);
    }
    case 'number': {
      if (def.coerce) return null;
      const tests = numberChecks(def);
      if (!tests) return null;
      return leaf((v) => typeof v === 'number' && Number.isFinite(v) && all(tests, v as never), String);
    }
    case 'boolean':
      return def.coerce ? null : leaf((v) => v === true || v === false, String);
    case 'null':
      return leaf(
        (v) => v === null,
        () => 'null',
      );
    case 'literal': {
      const values = def.values as unknown[];
      if (!values.every((x) => typeof x === 'string' || typeof x === 'boolean' || x === null || Number.isFinite(x)))
        return null;
      return leaf((v) => values.includes(v), JSON.stringify);
    }
    case 'enum': {
      const values = Object.values(def.entries as Record<string, unknown>);
      if (!values.every((x) => typeof x === 'string')) return null;
      const allowed = new Set<unknown>(values);
      return leaf((v) => allowed.has(v), JSON.stringify);
    }
    case 'nullable': {
      const inner = compile(def.innerType);
      if (!inner) return null;
      return Object.assign((v: unknown) => (v === null ? 'null' : inner(v)), {
        exact: (v: unknown) => v === null || inner.exact(v),
      });
    }
    case 'array': {
      if (def.checks?.length) return null;
      const element = defOf(def.element).type === 'optional' ? null : compile(def.element);
      if (!element) return null;
      const ser = (v: unknown) => {
        if (!Array.isArray(v)) fail();
        let out = '[';
        for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + element(v[i]);
        return out + ']';
      };
      const exact = (v: unknown) => {
        if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
        for (let i = 0; i < v.length; i++) if (!element.exact(v[i])) return false;
        return true;
      };
      return Object.assign(ser, { exact });
    }
    case 'record': {
      const key = defOf(def.keyType);
      if (key.type !== 'string' || key.checks?.length || key.format !== undefined || def.checks?.length) return null;
      const value = defOf(def.valueType).type === 'optional' ? null : compile(def.valueType);
      if (!value) return null;
      const ser = (v: unknown) => {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) fail();
        let out = '{';
        let first = true;
        for (const k of Object.keys(v)) {
          if (k === '__proto__') continue;
          out += (first ? '' : ',') + JSON.stringify(k) + ':' + value((v as Record<string, unknown>)[k]);
          first = false;
        }
        return out + '}';
      };
      const exact = (v: unknown) => {
        if (!isPlainObject(v)) return false;
        for (const k of Object.keys(v)) if (k === '__proto__' || !value.exact(v[k])) return false;
        return true;
      };
      return Object.assign(ser, { exact });
    }
    case 'object':
      return compileObject(def);
    default:
      return null;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function compileObject(def: Def): Ser | null {
  if (def.catchall !== undefined || def.checks?.length) return null;
  const fields: { key: string; prefix: string; optional: boolean; ser: Ser }[] = [];
  for (const [key, field] of Object.entries(def.shape as Record<string, unknown>)) {
    const fieldDef = defOf(field);
    const optional = fieldDef.type === 'optional';
    const ser = compile(optional ? fieldDef.innerType : field);
    if (!ser) return null;
    fields.push({ key, prefix: JSON.stringify(key) + ':', optional, ser });
  }
  const ser = (v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail();
    let out = '{';
    let first = true;
    for (const f of fields) {
      const x = (v as Record<string, unknown>)[f.key];
      if (x === undefined) {
        if (f.optional) continue;
        fail();
      }
      out += (first ? f.prefix : ',' + f.prefix) + f.ser(x);
      first = false;
    }
    return out + '}';
  };
  // The object's own keys must be declared fields, in the schema's order; a field left out must be optional, and an
  // optional one present as undefined is left out by both writers.
  const exact = (v: unknown) => {
    if (!isPlainObject(v)) return false;
    let i = 0;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) return false;
      while (i < fields.length && fields[i].key !== k) {
        if (!fields[i].optional) return false;
        i++;
      }
      if (i === fields.length) return false;
      const x = v[k];
      if (!(x === undefined ? fields[i].optional : fields[i].ser.exact(x))) return false;
      i++;
    }
    for (; i < fields.length; i++) if (!fields[i].optional) return false;
    return true;
  };
  return Object.assign(ser, { exact });
}

function resolve(schema: unknown): $ZodType {
  const s = schema as { _zod?: unknown; properties?: { _zod?: unknown } };
  if (s._zod) return schema as $ZodType;
  if (s.properties?._zod) return s.properties as $ZodType;
  throw new Error(`not a zod schema: ${JSON.stringify(schema)}`);
}

/** What fastify-type-provider-zod's serialiser does: zod's parse, then JSON.stringify of its result. */
function viaZod(schema: $ZodType, method: string, url: string, data: unknown): string {
  const result = safeParse(schema, data);
  if (result.error) throw new ResponseSerializationError(method, url, { cause: result.error });
  return JSON.stringify(result.data);
}

/**
 * Fastify's serializer compiler for zod response schemas. `verify` (tests) also runs zod on every response and
 * fails loudly when the two disagree, so the whole test suite checks the compiled serialisers.
 */
export function createSerializerCompiler(options: { verify?: boolean } = {}): FastifySerializerCompiler<unknown> {
  return ({ schema: maybeSchema, method, url }) => {
    const schema = resolve(maybeSchema);
    const fast = compile(schema);
    if (!fast) return (data: unknown) => viaZod(schema, method, url, data);
    return (data: unknown) => {
      let out: string;
      try {
        out = fast.exact(data) ? JSON.stringify(data) : fast(data);
      } catch (err) {
        if (err !== MISMATCH) throw err;
        return viaZod(schema, method, url, data);
      }
      if (options.verify) {
        const expected = viaZod(schema, method, url, data);
        if (expected !== out)
          throw new Error(`compiled serialiser of ${method} ${url} differs from zod:\n${out}\n${expected}`);
      }
      return out;
    };
  };
}

/** For tests: whether the schema gets a compiled serialiser. */
export const isCompiled = (schema: unknown) => compile(schema) !== null;
