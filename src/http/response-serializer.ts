import type { FastifySerializerCompiler } from 'fastify';
import { z } from 'zod';
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { isImmutable } from '../core/immutable.ts';
import { lazyModule } from '../core/lazy-module.ts';

/**
 * Response serialisers, through public APIs only (docs/adr/0030-response-serialisation-via-json-schema.md): zod
 * checks every answer against the route's schema (a payload that does not match is a 500, the error
 * fastify-type-provider-zod raises), and fast-json-stringify writes zod's output from the schema's JSON Schema
 * (z.toJSONSchema, output side). The bytes are those of JSON.stringify(schema.parse(payload)), what the type
 * provider's own serialiser sends: response schemas stay allow-lists, in the schema's order. A schema JSON Schema
 * cannot describe (a transform, a date, a cycle) keeps JSON.stringify of zod's output.
 *
 * Nothing is built at start-up: a route's writer is compiled on its second answer (its first is JSON.stringify's),
 * so neither fast-json-stringify (loaded on first use) nor any compile is on the way to the first healthy answer.
 *
 * A payload marked immutable (src/core/immutable.ts: frozen all the way down) is checked and written once per
 * schema and its JSON kept beside it (a WeakMap, so it goes when the value goes).
 */

type Writer = (value: unknown) => string;
type Json = { [key: string]: unknown };

const fastJson = lazyModule<typeof import('fast-json-stringify')>('fast-json-stringify');

const toJson: Writer = (value) => JSON.stringify(value);

const isEmptySchema = (s: unknown) => typeof s === 'object' && s !== null && Object.keys(s).length === 0;
const isNullSchema = (s: Json) => s.type === 'null' && Object.keys(s).length === 1;
const SCALARS = new Set<unknown>(['string', 'number', 'integer', 'boolean']);
/** Keywords whose value is a schema, a list of schemas, or a map of name to schema. */
const ONE = ['additionalProperties', 'items', 'not', 'propertyNames', 'contains', 'if', 'then', 'else'];
const LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];
const MAP = ['properties', 'patternProperties', 'definitions', '$defs'];

/** Thrown when fast-json-stringify would not write zod's bytes for some valid value of the schema. */
class NotWritable extends Error {}

/**
 * zod's JSON Schema reshaped for fast-json-stringify, with the same bytes for every value zod accepts:
 * - a nullable (anyOf [X, null]) becomes X that also takes null, tested inline instead of by a validator picking
 *   a branch;
 * - a field of any value (z.unknown) is not required, since zod leaves it out when undefined;
 * - `default` goes: zod has already applied it, the writer must not invent a value zod left out.
 * fast-json-stringify writes an object's required properties before its optional ones, so an optional property
 * declared before a required one would move: such a schema is refused (NotWritable) and keeps JSON.stringify.
 */
function forWriter(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Json = { ...(schema as Json) };
  delete out.default;
  for (const key of ONE)
    if (typeof out[key] === 'object' && out[key] !== null && !Array.isArray(out[key])) out[key] = forWriter(out[key]);
  for (const key of LIST) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(forWriter);
  for (const key of MAP)
    if (typeof out[key] === 'object' && out[key] !== null)
      out[key] = Object.fromEntries(Object.entries(out[key] as Json).map(([k, v]) => [k, forWriter(v)]));
  const properties = out.properties as Json | undefined;
  if (properties) {
    const required = ((out.required as string[] | undefined) ?? []).filter((k) => !isEmptySchema(properties[k]));
    out.required = required;
    const order = Object.keys(properties);
    if (order.some((k, i) => !required.includes(k) && order.slice(i + 1).some((later) => required.includes(later))))
      throw new NotWritable('an optional property comes before a required one');
  }
  const anyOf = out.anyOf as Json[] | undefined;
  if (anyOf?.length === 2 && Object.keys(out).length === 1) {
    const [first, second] = anyOf;
    const other = isNullSchema(second) ? first : isNullSchema(first) ? second : null;
    // The writer's object and array paths read `nullable`; its scalar ones take a list of types, its const none.
    if (other && (other.type === 'object' || other.type === 'array') && other.nullable === undefined)
      return { ...other, nullable: true };
    if (other && SCALARS.has(other.type) && other.const === undefined) return { ...other, type: [other.type, 'null'] };
  }
  return out;
}

/** The JSON Schema fast-json-stringify writes `schema`'s output with, or null when JSON Schema cannot describe it. */
export function writerSchema(schema: z.core.$ZodType): Json | null {
  let jsonSchema: Json;
  try {
    jsonSchema = z.toJSONSchema(schema, {
      io: 'output',
      target: 'draft-07',
      unrepresentable: 'throw',
      cycles: 'throw',
      reused: 'inline',
      // An empty registry: no $refs to the schemas' ids and no descriptions, which a writer has no use for.
      metadata: z.registry<Record<string, unknown>>(),
    }) as Json;
  } catch {
    return null;
  }
  const { $schema: _dialect, ...rest } = jsonSchema;
  try {
    return forWriter(rest) as Json;
  } catch (err) {
    if (err instanceof NotWritable) return null;
    throw err;
  }
}

// A writer depends on its schema alone, so a process compiles each schema once however many apps it builds (the
// tests build one per file).
const compiled = new WeakMap<z.core.$ZodType, Writer>();

function compile(schema: z.core.$ZodType): Writer {
  let writer = compiled.get(schema);
  if (!writer) {
    writer = compileWriter(schema);
    compiled.set(schema, writer);
  }
  return writer;
}

function compileWriter(schema: z.core.$ZodType): Writer {
  const jsonSchema = writerSchema(schema);
  if (!jsonSchema) return toJson;
  try {
    return fastJson()(jsonSchema) as Writer;
  } catch {
    // A schema fast-json-stringify does not take: JSON.stringify writes the same bytes.
    return toJson;
  }
}

function resolve(schema: unknown): z.core.$ZodType {
  if (schema instanceof z.core.$ZodType) return schema;
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (properties instanceof z.core.$ZodType) return properties;
  throw new Error(`not a zod schema: ${JSON.stringify(schema)}`);
}

/**
 * Fastify's serializer compiler for zod response schemas. `verify` (tests) compiles on the first answer and
 * compares every answer with JSON.stringify of zod's output, failing loudly when the two differ, so the whole test
 * suite checks the writers.
 */
export function createSerializerCompiler(options: { verify?: boolean } = {}): FastifySerializerCompiler<unknown> {
  const verify = options.verify === true;
  return ({ schema: maybeSchema, method, url }) => {
    const schema = resolve(maybeSchema);
    let writer: Writer | undefined;
    let answered = verify;
    const kept = new WeakMap<object, string>();
    return (data: unknown) => {
      const memo = typeof data === 'object' && data !== null ? kept.get(data) : undefined;
      if (memo !== undefined) return memo;
      const result = z.safeParse(schema, data);
      if (result.error) throw new ResponseSerializationError(method, url, { cause: result.error });
      if (!writer && answered) writer = compile(schema);
      answered = true;
      let out: string;
      try {
        out = (writer ?? toJson)(result.data);
      } catch (err) {
        if (verify) throw err;
        // zod accepted it, so JSON.stringify writes it: a writer's refusal must not turn a good answer into a 500.
        out = toJson(result.data);
      }
      if (verify) {
        const expected = toJson(result.data);
        if (out !== expected)
          throw new Error(`response writer of ${method} ${url} differs from zod:\n${out}\n${expected}`);
      }
      if (memo === undefined && typeof data === 'object' && data !== null && isImmutable(data)) kept.set(data, out);
      return out;
    };
  };
}

/** For tests: whether the schema's answers are written by fast-json-stringify (not JSON.stringify). */
export const isCompiled = (schema: z.core.$ZodType) => compile(schema) !== toJson;
