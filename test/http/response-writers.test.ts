import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createResolver, schemaArbitrary, type Json } from '../helpers/fuzz/openapi-schema-arbitrary.ts';
import type { TestApp } from '../helpers/app/test-app.ts';
import { isCompiled } from '../../src/http/response-serializer.ts';

type Route = { schema: unknown; method: string; url: string; httpStatus: string };

// Every response schema the app hands its serializer compiler, route by route and status by status.
const seen = vi.hoisted(() => [] as Route[]);
vi.mock('../../src/http/response-serializer.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/http/response-serializer.ts')>();
  return {
    ...real,
    createSerializerCompiler: (options?: { verify?: boolean }) => {
      const compile = real.createSerializerCompiler(options);
      return (route: Route) => {
        seen.push(route);
        return compile(route as never);
      };
    },
  };
});

const { createSerializerCompiler } = await vi.importActual<typeof import('../../src/http/response-serializer.ts')>(
  '../../src/http/response-serializer.ts',
);

const zodOf = (schema: unknown) =>
  (schema instanceof z.core.$ZodType ? schema : (schema as { properties: z.core.$ZodType }).properties) as z.ZodType;

/** Values to answer with: drawn from the schema's input side, with a field no schema declares. */
function answers(schema: z.ZodType): fc.Arbitrary<unknown> {
  const jsonSchema = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    reused: 'inline',
    metadata: z.registry<Record<string, unknown>>(),
  }) as Record<string, Json>;
  return schemaArbitrary(jsonSchema, createResolver(jsonSchema)).map((v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, undeclaredField: 'never sent' } : v,
  );
}

let t: TestApp;
beforeAll(async () => {
  // Test files share their process's modules: an app module an earlier file loaded holds the real compiler, so
  // the app is loaded afresh, through the mock.
  vi.resetModules();
  const { createTestApp } = await import('../helpers/app/test-app.ts');
  t = await createTestApp();
});
afterAll(() => t.close());

describe('every route and status', () => {
  it('sends the bytes of JSON.stringify(schema.parse(answer)), checks and all', () => {
    const bySchema = new Map<z.ZodType, Route[]>();
    for (const route of seen) {
      const schema = zodOf(route.schema);
      bySchema.set(schema, [...(bySchema.get(schema) ?? []), route]);
    }
    expect(seen.length).toBeGreaterThan(100);
    const neverValid: string[] = [];
    const notCompiled: string[] = [];
    for (const [schema, routes] of bySchema) {
      const { method, url, httpStatus } = routes[0];
      const where = `${method} ${url} ${httpStatus}`;
      if (!isCompiled(schema)) notCompiled.push(...routes.map((r) => `${r.method} ${r.url} ${r.httpStatus}`));
      // Without `verify`: the writer the app uses in production, from the second answer on.
      const serialise = createSerializerCompiler()({ schema, method, url, httpStatus } as never) as (
        data: unknown,
      ) => string;
      let valid = 0;
      fc.assert(
        fc.property(answers(schema), (answer) => {
          const parsed = schema.safeParse(answer);
          if (!parsed.success) {
            expect(() => serialise(answer), where).toThrow(
              expect.objectContaining({ code: 'FST_ERR_RESPONSE_SERIALIZATION' }),
            );
            return;
          }
          valid += 1;
          expect(serialise(answer), where).toBe(JSON.stringify(parsed.data));
        }),
        { numRuns: 25, seed: 20261127 },
      );
      if (valid === 0) neverValid.push(where);
    }
    // The route schemas whose answers the arbitrary never made valid (refinements it cannot know of).
    expect(neverValid).toEqual([]);
    // Nearly every route gets a compiled writer; the rest (transforms, dates...) keep JSON.stringify of zod's output.
    expect(notCompiled.length, notCompiled.join('\n')).toBeLessThan(seen.length / 20);
  }, 600_000);
});
