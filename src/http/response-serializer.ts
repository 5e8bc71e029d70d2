import type { FastifySerializerCompiler } from 'fastify';
import { safeParse, type $ZodType } from 'zod/v4/core';
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { isImmutable } from '../core/immutable.ts';

/**
 * Response serialisers compiled once per route and status from the zod schema into JavaScript: one pass over the
 * payload that checks it against the schema and writes the JSON, instead of zod's parse (a copy of the whole
 * payload) and then JSON.stringify on every response. Same output, same guarantees: response schemas are
 * allow-lists (only declared fields are written, in the schema's order, as zod's parse writes them) and a payload
 * that does not match its schema is a 500. Whenever the compiled code meets something it does not accept, zod
 * decides: its result is sent, or its error raised (ResponseSerializationError, as fastify-type-provider-zod raises
 * it). A schema using anything beyond plain data (transforms, defaults, unions, refinements, loose objects...) is
 * not compiled at all and keeps zod's serialiser.
 *
 * The code is generated (new Function) rather than assembled from closures: each object schema becomes a function
 * reading its fields by name, so the engine sees fixed property loads instead of one generic walker shared by every
 * shape, which was most of what serialising cost.
 *
 * An object or array marked immutable (src/core/immutable.ts: frozen all the way down) is written once per schema
 * and its JSON kept beside it (a WeakMap per object and array function, so it goes when the value goes): it passed
 * the schema's checks once and cannot change since. Everything else is written afresh; a value never marked costs
 * two failed lookups (the memo, then the mark).
 */

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

// What needs escaping in a JSON string; anything else is written between quotes as it is.
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;
const RUNTIME = {
  fail(): never {
    throw MISMATCH;
  },
  quote: (s: string) => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`),
  isArray: Array.isArray,
  keys: Object.keys,
  isFinite: Number.isFinite,
  isSafeInteger: Number.isSafeInteger,
  /** The JSON just written for `v`, kept in `memo` when `v` can never change. */
  keep(memo: WeakMap<object, string>, v: object, json: string): string {
    if (isImmutable(v)) memo.set(v, json);
    return json;
  },
};

/** The first lines of an object or array function: a value written before (immutable) is not written again. */
const recall = (p: Program) => {
  const memo = p.constant(new WeakMap<object, string>());
  return { memo, lookup: `  const kept = ${memo}.get(v);\n  if (kept !== undefined) return kept;` };
};

/** The generated source: constants it refers to by index, and one function per object, array and record. */
class Program {
  readonly constants: unknown[] = [];
  readonly functions: string[] = [];

  constant(value: unknown): string {
    this.constants.push(value);
    return `k[${this.constants.length - 1}]`;
  }

  fn(body: string): string {
    const name = `f${this.functions.length}`;
    this.functions.push(`function ${name}(v) {\n${body}\n}`);
    return name;
  }
}

function patternTest(p: Program, pattern: unknown, x: string): string | null {
  if (!(pattern instanceof RegExp)) return null;
  const re = p.constant(pattern);
  return pattern.global || pattern.sticky ? `(${re}.lastIndex = 0, ${re}.test(${x}))` : `${re}.test(${x})`;
}

/** The conditions a string must meet, as JavaScript over `x`, or null when one is not reproduced. */
function stringConditions(p: Program, def: Def, x: string): string[] | null {
  const conditions = [`typeof ${x} === 'string'`];
  if (def.format !== undefined) {
    const t = PATTERN_FORMATS.has(def.format as string) ? patternTest(p, def.pattern, x) : null;
    if (!t) return null;
    conditions.push(t);
  }
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'min_length') conditions.push(`${x}.length >= ${Number(c.minimum)}`);
    else if (c.check === 'max_length') conditions.push(`${x}.length <= ${Number(c.maximum)}`);
    else if (c.check === 'length_equals') conditions.push(`${x}.length === ${Number(c.length)}`);
    else if (c.check === 'string_format' && PATTERN_FORMATS.has(c.format as string)) {
      const t = patternTest(p, c.pattern, x);
      if (!t) return null;
      conditions.push(t);
    } else return null;
  }
  return conditions;
}

function numberConditions(def: Def, x: string): string[] | null {
  const conditions = [`typeof ${x} === 'number'`, `r.isFinite(${x})`];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    const bound = Number(c.value);
    if (c.check === 'number_format' && c.format === 'safeint') conditions.push(`r.isSafeInteger(${x})`);
    else if (c.check === 'greater_than') conditions.push(`${x} ${c.inclusive ? '>=' : '>'} ${bound}`);
    else if (c.check === 'less_than') conditions.push(`${x} ${c.inclusive ? '<=' : '<'} ${bound}`);
    else return null;
  }
  return conditions;
}

const when = (conditions: string[], json: string) => `(${conditions.join(' && ')} ? ${json} : r.fail())`;

/**
 * A JavaScript expression for the JSON of the value in variable `x` (read once by the caller), which calls
 * r.fail() when the value does not match; null when the schema uses anything not reproduced exactly.
 */
function expression(p: Program, schema: unknown, x: string): string | null {
  const def = defOf(schema);
  switch (def.type) {
    case 'string': {
      const conditions = def.coerce ? null : stringConditions(p, def, x);
      return conditions && when(conditions, `r.quote(${x})`);
    }
    case 'number': {
      const conditions = def.coerce ? null : numberConditions(def, x);
      return conditions && when(conditions, `('' + ${x})`);
    }
    case 'boolean':
      return def.coerce ? null : `(${x} === true ? 'true' : ${x} === false ? 'false' : r.fail())`;
    case 'null':
      return `(${x} === null ? 'null' : r.fail())`;
    case 'literal': {
      const values = def.values as unknown[];
      if (!values.every((v) => typeof v === 'string' || typeof v === 'boolean' || v === null || Number.isFinite(v)))
        return null;
      // A JSON literal is also a JavaScript one.
      return values.reduceRight<string>(
        (rest, v) => `(${x} === ${JSON.stringify(v)} ? ${JSON.stringify(JSON.stringify(v))} : ${rest})`,
        'r.fail()',
      );
    }
    case 'enum': {
      const values = Object.values(def.entries as Record<string, unknown>);
      if (!values.every((v) => typeof v === 'string')) return null;
      const json = p.constant(new Map(values.map((v) => [v, JSON.stringify(v)])));
      return `(${json}.get(${x}) ?? r.fail())`;
    }
    case 'nullable': {
      const inner = expression(p, def.innerType, x);
      return inner && `(${x} === null ? 'null' : ${inner})`;
    }
    case 'array': {
      const name = arrayFunction(p, def);
      return name && `${name}(${x})`;
    }
    case 'record': {
      const name = recordFunction(p, def);
      return name && `${name}(${x})`;
    }
    case 'object': {
      const name = objectFunction(p, def);
      return name && `${name}(${x})`;
    }
    default:
      return null;
  }
}

function arrayFunction(p: Program, def: Def): string | null {
  if (def.checks?.length || defOf(def.element).type === 'optional') return null;
  const element = expression(p, def.element, 'x');
  if (!element) return null;
  const { memo, lookup } = recall(p);
  return p.fn(
    `  if (!r.isArray(v)) r.fail();
${lookup}
  let out = '[';
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    out += (i === 0 ? '' : ',') + ${element};
  }
  return r.keep(${memo}, v, out + ']');`,
  );
}

function recordFunction(p: Program, def: Def): string | null {
  const key = defOf(def.keyType);
  if (key.type !== 'string' || key.checks?.length || key.format !== undefined || def.checks?.length) return null;
  if (defOf(def.valueType).type === 'optional') return null;
  const value = expression(p, def.valueType, 'x');
  return (
    value &&
    p.fn(
      `  if (typeof v !== 'object' || v === null || r.isArray(v)) r.fail();
  let out = '{';
  let first = true;
  for (const k of r.keys(v)) {
    if (k === '__proto__') continue;
    const x = v[k];
    out += (first ? '' : ',') + r.quote(k) + ':' + ${value};
    first = false;
  }
  return out + '}';`,
    )
  );
}

function objectFunction(p: Program, def: Def): string | null {
  if (def.catchall !== undefined || def.checks?.length) return null;
  const lines: string[] = [];
  // Until a required field is written the comma depends on what came before (variable c); after it, it is fixed.
  let commaKnown = false;
  let i = 0;
  for (const [key, field] of Object.entries(def.shape as Record<string, unknown>)) {
    const fieldDef = defOf(field);
    const optional = fieldDef.type === 'optional';
    const x = `x${i++}`;
    const json = expression(p, optional ? fieldDef.innerType : field, x);
    if (!json) return null;
    const name = JSON.stringify(JSON.stringify(key) + ':');
    lines.push(`  const ${x} = v[${JSON.stringify(key)}];`);
    const write = commaKnown ? `out += ',' + ${name} + ${json};` : `out += c + ${name} + ${json}; c = ',';`;
    lines.push(optional ? `  if (${x} !== undefined) { ${write} }` : `  ${write}`);
    if (!optional) commaKnown = true;
  }
  const { memo, lookup } = recall(p);
  return p.fn(
    `  if (typeof v !== 'object' || v === null || r.isArray(v)) r.fail();
${lookup}
  let out = '{';
  let c = '';
${lines.join('\n')}
  return r.keep(${memo}, v, out + '}');`,
  );
}

type Writer = (value: unknown) => string;

function compile(schema: unknown): Writer | null {
  const p = new Program();
  const root = expression(p, schema, 'v');
  if (!root) return null;
  const source = `${p.functions.join('\n')}\nreturn function serialise(v) { return ${root}; };`;
  return new Function('k', 'r', source)(p.constants, RUNTIME) as Writer;
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
    // Generated on the route's first answer, not at start-up, which would pay for every route's serialiser.
    let fast: Writer | null | undefined;
    return (data: unknown) => {
      if (fast === undefined) fast = compile(schema);
      if (!fast) return viaZod(schema, method, url, data);
      let out: string;
      try {
        out = fast(data);
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
