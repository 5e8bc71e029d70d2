import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createResolver, schemaArbitrary } from '../helpers/fuzz/openapi-schema-arbitrary.ts';

// The generator must keep working when openapi.yaml moves to named schemas, $refs, examples and other
// media types: a hand-written document using those features.
const doc = {
  openapi: '3.1.0',
  components: {
    schemas: {
      Node: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', maxLength: 5 },
          children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
        },
      },
      Id: { type: 'string', format: 'uuid', examples: ['00000000-0000-0000-0000-000000000000'] },
      Status: { enum: ['OPEN', 'DONE'] },
      WithNull: { type: ['string', 'null'] },
      Combined: {
        allOf: [
          { $ref: '#/components/schemas/Node' },
          { properties: { status: { $ref: '#/components/schemas/Status' } } },
        ],
      },
      Tuple: { type: 'array', prefixItems: [{ const: 1 }, { type: 'boolean' }] },
      Legacy: { type: 'integer', minimum: 1, maximum: 3, nullable: true },
    },
    parameters: { IdParam: { name: 'id', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } } },
    requestBodies: {
      NodeBody: { content: { 'application/vnd.fleet+json': { schema: { $ref: '#/components/schemas/Node' } } } },
    },
  },
};

describe('schema arbitraries from OpenAPI 3.1', () => {
  const resolve = createResolver(doc);
  it('follows $refs in parameters and request bodies', () => {
    expect(resolve<any>({ $ref: '#/components/parameters/IdParam' }).name).toBe('id');
    expect(Object.keys(resolve<any>({ $ref: '#/components/requestBodies/NodeBody' }).content)).toEqual([
      'application/vnd.fleet+json',
    ]);
  });

  it.each(Object.keys(doc.components.schemas))(
    'generates values for %s (recursive, allOf, enum, type arrays, prefixItems, nullable)',
    (name) => {
      const values = fc.sample(schemaArbitrary({ $ref: `#/components/schemas/${name}` }, resolve), {
        numRuns: 50,
        seed: 1,
      });
      expect(values).toHaveLength(50);
      if (name === 'Status') expect(values.every((v) => v === 'OPEN' || v === 'DONE')).toBe(true);
      if (name === 'Node' || name === 'Combined')
        expect(values.every((v) => typeof (v as any).name === 'string')).toBe(true);
      if (name === 'Tuple') expect(values.every((v) => Array.isArray(v) && v[0] === 1)).toBe(true);
    },
  );
});
