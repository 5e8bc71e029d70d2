import { Validator } from '@seriousme/openapi-schema-validator';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.api.get('/openapi.yaml');
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toContain('yaml');
  doc = parse(res.body);
});
afterAll(() => t.close());

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).filter(([m]) => ['get', 'post', 'patch', 'put', 'delete'].includes(m)).map(([method, op]) => ({ path, method, op })));

describe('GET /openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document (independent validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every /api/v1 operation with a unique operationId, security and error responses', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(8);
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, op } of ops) {
      expect(op.operationId, `${method} ${path}`).toBeTruthy();
      expect(op.responses['500'], `${method} ${path}`).toBeDefined();
      if (op.security) {
        expect(op.responses['401']).toBeDefined();
        expect(op.responses['429']).toBeDefined();
      }
      if (path.includes('{')) expect(op.responses['404'], `${method} ${path}`).toBeDefined();
    }
  });

  it('leaves only the public endpoints without security', () => {
    const open = operations().filter((o) => !o.op.security).map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
    expect(open.every((o) => /\/(health|health\/live|version|changelog)$/.test(o))).toBe(true);
  });

  it('marks optional request bodies as optional and the others as required', () => {
    const required = (path: string) => doc.paths[path].post.requestBody.required;
    expect(required('/api/v1/assets/{id}/checkin')).toBe(false);
    expect(required('/api/v1/tools/{id}/mark-serviced')).toBe(false);
    expect(required('/api/v1/assets')).toBe(true);
  });

  it('has no unreferenced components', () => {
    const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components.schemas);
    for (const name of Object.keys(doc.components.schemas)) expect(text).toContain(`#/components/schemas/${name}"`);
  });
});
