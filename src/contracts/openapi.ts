import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';

type Json = Record<string, unknown>;

/**
 * The OpenAPI document as generated from the route schemas, tidied for readers: the zod transform
 * registers an input and an output variant of every named schema, so unreferenced components are
 * dropped, and the per-schema `$schema`/`$id` keys (noise inside components) are removed.
 */
export function openApiDocument(app: FastifyInstance): Json {
  const doc = structuredClone(app.swagger()) as unknown as Json & { components?: { schemas?: Record<string, Json> } };
  const schemas = doc.components?.schemas ?? {};
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  const referenced = new Set<string>();
  const visit = (value: unknown) => {
    const text = JSON.stringify(value);
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (!referenced.has(name)) {
        referenced.add(name);
        visit(schemas[name]);
      }
    }
  };
  visit(doc.paths);
  for (const name of Object.keys(schemas)) if (!referenced.has(name)) delete schemas[name];
  return doc;
}

export const renderOpenApiYaml = (app: FastifyInstance) => stringify(openApiDocument(app), { lineWidth: 0 });
