import { ERROR_COMPONENTS, errorSchema, takesIdempotencyKey } from './errors.ts';

type Json = Record<string, any>;

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export interface Operation {
  path: string;
  method: string;
  op: Json;
}

export function operationsOf(doc: Json): Operation[] {
  return Object.entries<Json>(doc.paths ?? {}).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  );
}

const STATUS_TEXT: Record<string, string> = {
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  503: 'Service unavailable',
};
const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);
const isAuthenticated = (op: Json) => Array.isArray(op.security) && op.security.length > 0;

/** Every declared header is one the server always sends with that response, hence `required`. */
const HEADERS: Record<string, Json> = {
  XRequestId: {
    description:
      'The request id: yours when you sent a valid `X-Request-Id`, otherwise generated. Quote it in support requests.',
    required: true,
    schema: { type: 'string', maxLength: 128 },
  },
  XRateLimitLimit: {
    description: 'Requests allowed per window for this key',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  XRateLimitRemaining: {
    description: 'Requests left in the current window',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  XRateLimitReset: {
    description: 'Unix epoch seconds at which the window resets',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  RetryAfter: {
    description: 'Seconds until the rate-limit window resets',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/**
 * Turns the document @fastify/swagger builds from the route schemas into the published contract. Every
 * rule is driven by what the routes declare (security, `x-content`/`x-headers` extensions, batch markers),
 * so a new route gets the same treatment without touching this file.
 */
export function applyContractRules(doc: Json): void {
  const components = (doc.components ??= {});
  const schemas: Json = (components.schemas ??= {});
  Object.assign(schemas, { Error: openError(schemas.Error) }, ERROR_COMPONENTS);
  components.headers = HEADERS;
  for (const { path, method, op } of operationsOf(doc)) {
    if (op.security === undefined) op.security = [];
    const batch = op.requestBody?.content?.['application/json']?.schema?.['x-batch-cap'] !== undefined;
    for (const [code, response] of Object.entries<Json>(op.responses ?? {})) {
      const status = Number(code);
      const json = response.content?.['application/json'];
      if (json?.schema?.$ref === '#/components/schemas/Error') {
        const specific = errorSchema(status, {
          operationId: op.operationId,
          method: method.toUpperCase(),
          hasBody: method !== 'get', // Fastify parses a body on DELETE too
          hasParams: path.includes('{'),
          batch,
          scopes: [...new Set<string>((op.security ?? []).flatMap((alt: Json) => alt.bearerAuth ?? []))],
        });
        if (specific) json.schema = specific;
      }
      applyMedia(op, code, response);
      response.headers = { ...responseHeaders(op, status), ...response.headers };
      if (takesIdempotencyKey(method.toUpperCase(), op.operationId)) idempotencyHeaders(response, status);
      if (response.description === 'Default Response') {
        const summary = op.summary ?? op.operationId;
        response.description = code === '200' ? summary : `${STATUS_TEXT[code] ?? code}: ${lowerFirst(summary)}`;
      }
    }
    delete op['x-content'];
    delete op['x-headers'];
    // A body that is not JSON (multipart, raw bytes): the route declares it whole, as OpenAPI shows it.
    if (op['x-request-content']) op.requestBody = op['x-request-content'];
    delete op['x-request-content'];
    booleanQueries(op);
  }
  openBatchBodies(doc);
  hoistNamedSchemas(doc);
  exclusiveUnions(doc.components.schemas);
  stripClosedObjects(doc);
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/**
 * The base error, open to new fields like every published response (Versioning rule 2). The status-specific
 * fields (fieldErrors, retryAfterSec, requestId) are published on the status's own error schema only, so a
 * typed client can narrow an error on them.
 */
function openError(error: Json | undefined): Json {
  const { fieldErrors: _f, retryAfterSec: _r, requestId: _q, ...common } = error?.properties ?? {};
  return {
    ...(error ?? {}),
    properties: common,
    description: 'Every error: `ok: false`, a machine-readable `error` code, and a human `message`.',
  };
}

/**
 * Headers sent with a response: X-Request-Id always (but for a malformed URL); X-RateLimit-* on every
 * authenticated response once the
 * key is known: not on 401 (no key), nor declared on 400 and 500, which can be answered before the key is
 * counted (a malformed URL is refused before routing); Retry-After on 429.
 */
function responseHeaders(op: Json, status: number): Json {
  // A 400 for a malformed URL is answered before routing, without the request id.
  const headers: Json = {
    'X-Request-Id': status === 400 ? { ...HEADERS.XRequestId, required: false } : headerRef('XRequestId'),
  };
  if (isAuthenticated(op) && ![400, 401, 500].includes(status)) {
    headers['X-RateLimit-Limit'] = headerRef('XRateLimitLimit');
    headers['X-RateLimit-Remaining'] = headerRef('XRateLimitRemaining');
    headers['X-RateLimit-Reset'] = headerRef('XRateLimitReset');
  }
  if (status === 429) headers['Retry-After'] = headerRef('RetryAfter');
  return headers;
}

/**
 * Idempotency-Key: every answer that can be a replay may carry Idempotent-Replayed; a 409 for a key still in use
 * carries Retry-After (the route's own 409s do not, hence not required).
 */
function idempotencyHeaders(response: Json, status: number) {
  if (status < 300 || (status >= 400 && status < 500 && ![401, 403, 429].includes(status)))
    response.headers['Idempotent-Replayed'] = {
      description: '`true` on a replay of an earlier request with the same Idempotency-Key (absent otherwise)',
      required: false,
      schema: { type: 'string', enum: ['true'] },
    };
  if (status === 409)
    response.headers['Retry-After'] = {
      description: 'With idempotency_key_in_use: seconds to wait before retrying',
      required: false,
      schema: { type: 'integer', minimum: 1 },
    };
}

/**
 * Routes that answer with something other than JSON declare it in `x-content` (media type to schema) and the
 * headers that go with it in `x-headers`, per status. The JSON schema then loses its string stand-in variant.
 */
function applyMedia(op: Json, code: string, response: Json) {
  const extra: Json | undefined = op['x-content']?.[code];
  if (extra) {
    const json = response.content?.['application/json'];
    const variants: Json[] | undefined = json?.schema?.anyOf;
    if (variants) {
      const kept = variants.filter((v) => v.type !== 'string');
      json.schema = kept.length === 1 ? kept[0] : { ...json.schema, anyOf: kept };
    } else if (json?.schema?.type === 'string') {
      delete response.content['application/json'];
    }
    response.content = { ...response.content, ...extra };
  }
  const headers: Json | undefined = op['x-headers']?.[code];
  if (headers) response.headers = { ...response.headers, ...headers };
}

/**
 * Query flags arrive as text; the server reads true/false (and 1/0). Published as booleans so generated clients
 * take a boolean and serialise it as true/false.
 */
function booleanQueries(op: Json) {
  for (const param of op.parameters ?? []) {
    const values = param.schema?.enum;
    if (
      param.in === 'query' &&
      Array.isArray(values) &&
      ['true', 'false', '1', '0'].every((v) => values.includes(v)) &&
      values.length === 4
    ) {
      const { enum: _e, type: _t, ...rest } = param.schema;
      param.schema = { ...rest, type: 'boolean' };
      param.description ??= `${param.schema.description ?? ''} (true or false; 1 and 0 are also accepted)`.trim();
    }
  }
}

/**
 * Batch bodies (marked `x-batch-cap` by src/core/batch.ts): the server accepts any entries and answers 200 with
 * per-entry results, so a validating proxy must not reject a batch for one bad entry. Entries are published as
 * "the create shape, or anything else (reported as a failed entry)".
 */
function openBatchBodies(doc: Json) {
  for (const { op } of operationsOf(doc)) {
    const schema = op.requestBody?.content?.['application/json']?.schema;
    if (schema?.['x-batch-cap'] === undefined) continue;
    const cap = schema['x-batch-cap'];
    delete schema['x-batch-cap'];
    const entries = (array: Json) => {
      array.minItems = 1;
      array.maxItems = cap;
      array.items = {
        anyOf: [array.items, { description: 'Any other value: reported as a failed entry in `results`' }],
      };
    };
    for (const variant of schema.anyOf ?? []) {
      if (variant.type === 'array') entries(variant);
      else if (variant.properties?.entries) entries(variant.properties.entries);
    }
  }
}

/**
 * Every request body and JSON success body becomes a named component, `<OperationId>Request` and
 * `<OperationId>Response`, unless the route already names it. Batch entries equal to a named create body
 * are replaced by a reference to it.
 */
function hoistNamedSchemas(doc: Json) {
  const schemas: Json = doc.components.schemas;
  const byText = new Map<string, string>();
  const hoist = (holder: Json, name: string) => {
    const schema = holder.schema;
    if (!schema || schema.$ref) return;
    if (schemas[name]) throw new Error(`component name clash: ${name}`);
    schemas[name] = schema;
    byText.set(JSON.stringify(schema), name);
    holder.schema = { $ref: `#/components/schemas/${name}` };
  };
  const ops = operationsOf(doc);
  for (const { op } of ops) {
    const body = op.requestBody?.content?.['application/json'];
    if (body && !isBatchBody(body.schema)) hoist(body, `${pascal(op.operationId)}Request`);
  }
  for (const { op } of ops) {
    const body = op.requestBody?.content?.['application/json'];
    if (body && isBatchBody(body.schema)) {
      for (const variant of body.schema.anyOf) {
        const array = variant.type === 'array' ? variant : variant.properties.entries;
        const named = byText.get(JSON.stringify(array.items.anyOf[0]));
        if (named) array.items.anyOf[0] = { $ref: `#/components/schemas/${named}` };
      }
      hoist(body, `${pascal(op.operationId)}Request`);
    }
    for (const [code, response] of Object.entries<Json>(op.responses ?? {})) {
      const json = response.content?.['application/json'];
      // Per-operation error codes (allOf Error + that operation's enum) stay inline: one component each would be noise.
      if (!json?.schema || json.schema.$ref || json.schema.allOf?.[0]?.$ref === '#/components/schemas/Error') continue;
      const same = byText.get(JSON.stringify(json.schema));
      if (same) json.schema = { $ref: `#/components/schemas/${same}` };
      else hoist(json, `${pascal(op.operationId)}${code.startsWith('2') ? 'Response' : `Error${code}`}`);
    }
  }
}

const isBatchBody = (schema: Json | undefined) =>
  Array.isArray(schema?.anyOf) &&
  schema.anyOf.some((v: Json) => v.type === 'array' && v.items?.anyOf?.length === 2 && v.maxItems !== undefined);

/**
 * The server answers with an allow-list (zod strips undeclared fields), but the published schemas stay open:
 * Versioning rule 2 adds optional response fields within v1, and unknown request fields are ignored.
 */
function stripClosedObjects(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(stripClosedObjects);
  if (!value || typeof value !== 'object') return;
  const node = value as Json;
  if (node.additionalProperties === false) delete node.additionalProperties;
  for (const inner of Object.values(node)) stripClosedObjects(inner);
}

/**
 * A response with two shapes (tool checkout: one tool, or a kit with its parts) is a zod union, published as
 * `anyOf`. When each shape requires a property the others do not declare, exactly one can match: published as
 * `oneOf`, which generators and validators treat as a tagged choice.
 */
function exclusiveUnions(schemas: Json) {
  for (const schema of Object.values<Json>(schemas)) {
    const variants: Json[] | undefined = schema.anyOf;
    if (!variants || variants.length < 2 || !variants.every((v) => v.type === 'object' && v.required?.length)) continue;
    const own = (v: Json, i: number) =>
      (v.required as string[]).some((p) => variants.every((other, j) => j === i || !(p in (other.properties ?? {}))));
    if (variants.every(own)) {
      schema.oneOf = variants;
      delete schema.anyOf;
    }
  }
}
