import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { parseYaml } from '../helpers/contracts/yaml-document.ts';
import { TYPE_SCOPES } from '../../src/modules/imports/imports.service.ts';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.api.get('/openapi.yaml');
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toContain('yaml');
  doc = parseYaml(res.body);
});
afterAll(() => t.close());

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

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
      if (op.security.length) {
        expect(op.responses['401']).toBeDefined();
        expect(op.responses['429']).toBeDefined();
      }
      if (path.includes('{')) expect(op.responses['404'], `${method} ${path}`).toBeDefined();
    }
  });

  it('leaves only the public endpoints without security', () => {
    const open = operations()
      .filter((o) => o.op.security.length === 0)
      .map((o) => `${o.method.toUpperCase()} ${o.path}`)
      .sort();
    expect(open.every((o) => /\/(health|health\/live|version|changelog)$/.test(o))).toBe(true);
  });

  it('marks optional request bodies as optional and the others as required', () => {
    const required = (path: string) => doc.paths[path].post.requestBody.required;
    expect(required('/api/v1/assets/{id}/checkin')).toBe(false);
    expect(required('/api/v1/tools/{id}/mark-serviced')).toBe(false);
    expect(required('/api/v1/assets')).toBe(true);
  });

  it('names the scope of every authenticated operation in its security requirement', () => {
    for (const { path, method, op } of operations()) {
      if (!op.security.length) continue;
      const scopes: string[] = op.security.flatMap((requirement: { bearerAuth: string[] }) => requirement.bearerAuth);
      // Reading the organisation's settings (its currency) needs any valid key, like /me.
      const anyKey =
        ['/api/v1/me', '/api/v1/me/usage'].includes(path) || (path === '/api/v1/organization' && method === 'get');
      if (anyKey) expect(scopes).toEqual([]);
      else for (const scope of scopes) expect(scope, `${method} ${path}`).toMatch(/^[a-z]+:(read|write|approve)$/);
      if (op.responses['403']) {
        const codes = JSON.stringify(op.responses['403'].content['application/json'].schema);
        for (const scope of scopes) expect(codes).toContain(`missing_scope:${scope}`);
      }
    }
  });

  it("offers one security alternative per scope an attachment's subject type takes", () => {
    const kinds = { get: 'read', post: 'write', patch: 'write', delete: 'write' } as const;
    const attachmentOps = operations().filter(
      ({ path, op }) => path.startsWith('/api/v1/attachments') && op.security.length,
    );
    expect(attachmentOps).toHaveLength(9);
    for (const { path, method, op } of attachmentOps) {
      const kind = kinds[method as keyof typeof kinds];
      expect(op.security, `${method} ${path}`).toEqual(
        ['assets', 'flags', 'workorders', 'tools'].map((resource) => ({ bearerAuth: [`${resource}:${kind}`] })),
      );
      expect(op.description).toContain(`\`workorders:${kind}\` (work_order, repair)`);
    }
  });

  it("names imports:write with each imported type's write scope, and their 403 codes", () => {
    const typeScopes = [...new Set(Object.values(TYPE_SCOPES))];
    for (const [path, method] of [
      ['/api/v1/imports', 'post'],
      ['/api/v1/imports/{id}/commit', 'post'],
      ['/api/v1/imports/{id}/rollback', 'post'],
    ]) {
      const op = doc.paths[path][method];
      expect(op.security, `${method} ${path}`).toEqual(
        typeScopes.map((scope) => ({ bearerAuth: ['imports:write', scope] })),
      );
      const codes = op.responses['403'].content['application/json'].schema.allOf[1].properties.error.enum;
      expect(codes).toEqual(expect.arrayContaining(['imports:write', ...typeScopes].map((s) => `missing_scope:${s}`)));
    }
  });

  it('gives the multipart upload a request example that fits its fields', () => {
    const media = doc.paths['/api/v1/attachments'].post.requestBody.content['multipart/form-data'];
    expect(Object.keys(media.example).sort()).toEqual(Object.keys(media.schema.properties).sort());
    expect(media.schema.properties.subjectType.enum).toContain(media.example.subjectType);
  });

  it('publishes the real media types of the CSV export and the QR image, with Content-Disposition', () => {
    const list = doc.paths['/api/v1/tools'].get.responses['200'];
    expect(Object.keys(list.content).sort()).toEqual(['application/json', 'text/csv']);
    expect(list.content['application/json'].schema.$ref).toBe('#/components/schemas/ListToolsResponse');
    expect(list.headers['Content-Disposition']).toBeDefined();
    expect(Object.keys(doc.paths['/api/v1/tools/{id}/qr'].get.responses['200'].content).sort()).toEqual([
      'image/png',
      'image/svg+xml',
    ]);
  });

  it('declares X-Request-Id everywhere, X-RateLimit-* on authenticated answers and Retry-After on 429', () => {
    for (const { op } of operations()) {
      for (const [code, response] of Object.entries<any>(op.responses)) {
        expect(response.headers['X-Request-Id']).toBeDefined();
        if (op.security.length && !['400', '401', '500'].includes(code))
          expect(response.headers['X-RateLimit-Remaining']).toBeDefined();
        if (code === '429') expect(response.headers['Retry-After']).toBeDefined();
      }
    }
  });

  it('keeps every published schema open to additive fields (Versioning rule 2)', () => {
    expect(JSON.stringify(doc)).not.toContain('"additionalProperties":false');
  });

  it('types query flags as booleans and keeps batch entries open for validating proxies', () => {
    const lowStock = doc.paths['/api/v1/tools'].get.parameters.find((p: any) => p.name === 'lowStock');
    expect(lowStock.schema.type).toBe('boolean');
    const batch = doc.components.schemas.CreateToolsBatchRequest;
    const items = batch.anyOf.find((v: any) => v.type === 'array').items.anyOf;
    expect(items[0].$ref).toBe('#/components/schemas/CreateToolRequest');
    expect(Object.keys(items[1])).toEqual(['description']);
  });

  it('gives every operation a summary and every request and success body a named schema and an example that validates', async () => {
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    const addFormats = (await import('ajv-formats')).default.default;
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const check = (where: string, media: any) => {
      expect(media.schema.$ref, where).toMatch(/^#\/components\/schemas\//);
      const validate = ajv.getSchema(`doc${media.schema.$ref}`)!;
      expect(validate(media.example), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    for (const { path, method, op } of operations()) {
      expect(op.summary, `${method} ${path}`).toBeTruthy();
      const body = op.requestBody?.content['application/json'];
      if (body) check(`${method} ${path} request`, body);
      for (const [code, response] of Object.entries<any>(op.responses)) {
        expect(response.description).not.toBe('Default Response');
        if (code.startsWith('2') && response.content?.['application/json'])
          check(`${method} ${path} ${code}`, response.content['application/json']);
      }
    }
  });

  it('gives every response media type an example, and every JSON one validates against its schema (errors too)', async () => {
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    const addFormats = (await import('ajv-formats')).default.default;
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    // Most error answers share their schema: each distinct one is compiled once.
    const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
    for (const { path, method, op } of operations()) {
      for (const [code, response] of Object.entries<any>(op.responses)) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) {
          const where = `${method} ${path} ${code} ${type}`;
          expect(media.example, where).toBeDefined();
          if (type !== 'application/json') continue;
          const text = JSON.stringify(media.schema).replaceAll('"#/components/', '"doc#/components/');
          let validate = compiled.get(text);
          if (!validate) compiled.set(text, (validate = ajv.compile(JSON.parse(text))));
          expect(validate(media.example), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        }
      }
    }
  });

  it('has no unreferenced components', () => {
    const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components.schemas);
    for (const name of Object.keys(doc.components.schemas)) expect(text).toContain(`#/components/schemas/${name}"`);
  });
});
