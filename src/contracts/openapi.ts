import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { addExamples } from './examples.ts';
import { assertContract } from './openapi-checks.ts';
import { applyContractRules } from './openapi-rules.ts';
import { swaggerDocument } from './route-table.ts';

type Json = Record<string, unknown>;

/**
 * The OpenAPI document as generated from the route schemas, completed by the contract rules (security,
 * headers, media types, error codes, named components, examples; see openapi-rules.ts), checked for what
 * every operation must declare (throws, naming each route and what it lacks), and tidied: the zod transform
 * registers an input and an output variant of every named schema, so unreferenced components are
 * dropped, and the per-schema `$schema`/`$id` keys (noise inside components) are removed.
 */
export async function openApiDocument(app: FastifyInstance): Promise<Json> {
  const doc = structuredClone(await swaggerDocument(app)) as Json & { components?: { schemas?: Record<string, Json> } };
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
  markOptionalBodies(doc.paths as Record<string, Record<string, Json>>);
  applyContractRules(doc);
  addExamples(doc);
  assertContract(doc);
  visit(doc.paths);
  for (const name of Object.keys(schemas)) if (!referenced.has(name)) delete schemas[name];
  return doc;
}

/** @fastify/swagger marks every request body required; a body whose schema admits null is optional. */
function markOptionalBodies(paths: Record<string, Record<string, Json>>) {
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      const body = op?.requestBody as { required?: boolean; content?: Record<string, { schema?: Json }> } | undefined;
      const schema = body?.content?.['application/json']?.schema;
      const variants = (schema?.anyOf as Json[] | undefined) ?? [];
      if (body && variants.some((v) => v.type === 'null')) body.required = false;
    }
  }
}

// No YAML anchors/aliases: several integrator tools refuse or mis-read them.
export const renderOpenApiYaml = async (app: FastifyInstance) =>
  stringify(await openApiDocument(app), { lineWidth: 0, aliasDuplicateObjects: false });
