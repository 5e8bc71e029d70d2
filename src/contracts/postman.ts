import type { FastifyInstance } from 'fastify';

type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const POSTMAN_SCHEMA = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

/**
 * A Postman v2.1 collection generated from the OpenAPI document: one request per operation, grouped in a
 * folder per tag, bearer auth from the `apiKey` variable at collection level (public routes opt out), and
 * every URL built on the `baseUrl` variable. Output is deterministic (no random ids) so it can be committed.
 */
export function postmanCollection(openapi: Json): Json {
  const schemas: Json = openapi.components?.schemas ?? {};
  const folders = new Map<string, Json[]>();
  for (const [path, item] of Object.entries<Json>(openapi.paths ?? {})) {
    for (const method of METHODS) {
      const op: Json | undefined = item[method];
      if (!op) continue;
      const tag: string = op.tags?.[0] ?? 'other';
      if (!folders.has(tag)) folders.set(tag, []);
      folders.get(tag)!.push(requestItem(path, method, op, schemas));
    }
  }
  return {
    info: {
      name: openapi.info?.title ?? 'API',
      description: `${openapi.info?.description ?? ''}\n\nSet the \`apiKey\` variable to your API key and \`baseUrl\` to your server.`.trim(),
      schema: POSTMAN_SCHEMA,
      version: openapi.info?.version,
    },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{apiKey}}', type: 'string' }] },
    variable: [
      { key: 'baseUrl', value: openapi.servers?.[0]?.url ?? 'http://localhost:3000', type: 'string' },
      { key: 'apiKey', value: '', type: 'string' },
    ],
    item: [...folders].map(([name, item]) => ({ name, item })),
  };
}

function requestItem(path: string, method: string, op: Json, schemas: Json): Json {
  const params: Json[] = op.parameters ?? [];
  const segments = path.replace(/^\//, '').split('/').map((s) => s.replace(/^\{(.+)\}$/, ':$1'));
  const query = params
    .filter((p) => p.in === 'query')
    .map((p) => ({ key: p.name, value: '', description: p.description ?? p.schema?.description, disabled: true }));
  const variable = params
    .filter((p) => p.in === 'path')
    .map((p) => ({ key: p.name, value: '', description: p.description ?? `${p.name} of the resource` }));
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const request: Json = {
    method: method.toUpperCase(),
    header: bodySchema ? [{ key: 'Content-Type', value: 'application/json' }] : [],
    url: {
      raw: `{{baseUrl}}/${segments.join('/')}`,
      host: ['{{baseUrl}}'],
      path: segments,
      ...(query.length ? { query } : {}),
      ...(variable.length ? { variable } : {}),
    },
    description: [op.summary, op.description].filter(Boolean).join('\n\n'),
  };
  if (bodySchema) {
    request.body = { mode: 'raw', raw: JSON.stringify(exampleOf(bodySchema, schemas, 0), null, 2), options: { raw: { language: 'json' } } };
  }
  if (!op.security) request.auth = { type: 'noauth' };
  return { id: op.operationId, name: op.summary ?? op.operationId, request, response: [] };
}

/** A small example value for a JSON schema: required properties only (all when none is required). */
function exampleOf(schema: Json | undefined, schemas: Json, depth: number): unknown {
  if (!schema || depth > 6) return null;
  if (schema.$ref) return exampleOf(schemas[String(schema.$ref).split('/').pop()!], schemas, depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants: Json[] | undefined = schema.anyOf ?? schema.oneOf;
  if (variants) return exampleOf(variants.find((v) => v.type !== 'null') ?? variants[0], schemas, depth + 1);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Json) => exampleOf(s, schemas, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const props: Json = schema.properties ?? {};
      const required: string[] = schema.required?.length ? schema.required : Object.keys(props);
      return Object.fromEntries(required.filter((k) => props[k]).map((k) => [k, exampleOf(props[k], schemas, depth + 1)]));
    }
    case 'array':
      return [exampleOf(schema.items, schemas, depth + 1)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'string':
      if (schema.format === 'date-time') return '2026-01-01T00:00:00.000Z';
      if (schema.format === 'date') return '2026-01-01';
      if (schema.format === 'uri') return 'https://example.com';
      return 'string';
    default:
      return null;
  }
}

export const renderPostmanCollection = (app: FastifyInstance) => `${JSON.stringify(postmanCollection(app.swagger() as unknown as Json), null, 2)}\n`;
