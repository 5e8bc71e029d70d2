import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';
import { generateApiKey } from '../../src/core/api-keys.ts';
import { createResolver, schemaArbitrary, type Json } from '../helpers/fuzz/openapi-schema-arbitrary.ts';
import { parseYaml } from '../helpers/contracts/yaml-document.ts';

/**
 * Property-based fuzzing of every operation in openapi.yaml (read at test time): schema-shaped inputs
 * plus hostile mutations (deep nesting, lone surrogates, NUL, huge strings, wrong types, long ids, bad
 * keys). Property: no status >= 500, and every 4xx carries the error envelope. Reproducible: the seed is
 * printed; FUZZ_SEED=<seed> replays it, FUZZ_RUNS sets the total number of requests (default 3,000).
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 3_000);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const doc = parseYaml(readFileSync(fileURLToPath(new URL('../../openapi.yaml', import.meta.url)), 'utf8'));
const resolve = createResolver(doc);

interface Param {
  name: string;
  in: string;
  required?: boolean;
  schema?: any;
  content?: Record<string, { schema?: any }>;
}
interface Operation {
  method: string;
  path: string;
  id: string;
  params: Param[];
  body?: { mediaType: string; schema: any; required: boolean };
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, rawItem] of Object.entries<any>(doc.paths ?? {})) {
    const item = resolve(rawItem);
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      // Operation parameters override path-level ones with the same name and location.
      const byKey = new Map<string, Param>();
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x) => resolve<Param>(x)))
        byKey.set(`${p.in}:${p.name}`, p);
      const requestBody = resolve<any>(op.requestBody);
      let body: Operation['body'];
      if (requestBody?.content) {
        const types = Object.keys(requestBody.content);
        const mediaType = types.find((t) => /^application\/(.+\+)?json/.test(t)) ?? types[0];
        body = {
          mediaType,
          schema: resolve(requestBody.content[mediaType]?.schema),
          required: Boolean(requestBody.required),
        };
      }
      out.push({
        method: method.toUpperCase(),
        path,
        id: op.operationId ?? `${method} ${path}`,
        params: [...byKey.values()],
        body,
      });
    }
  }
  return out;
}

const paramSchema = (p: Param) => p.schema ?? Object.values(p.content ?? {})[0]?.schema;

// ---- hostile mutations ------------------------------------------------------------------------------
const hostileString = fc.constantFrom(
  'x\ud800',
  '\udc00y',
  'a\u0000b',
  '\u0000',
  'x'.repeat(70_000),
  '\uFFFF\uFFFE',
  '\u202Eevil',
  '%00',
  '%ED%A0%80',
  '😀'.repeat(500),
);
const wrongType: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  null,
  true,
  0,
  -1,
  1e308,
  [],
  {},
  [1, 'a'],
  { a: { b: [] } },
  '',
);

/** Replaces one leaf (or the whole value) of a generated value by something hostile. */
function mutate(value: Json): fc.Arbitrary<Json> {
  const leaves: (string | number)[][] = [];
  const walk = (v: Json, path: (string | number)[]) => {
    leaves.push(path);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(value, []);
  return fc.tuple(fc.constantFrom(...leaves), fc.oneof(hostileString, wrongType)).map(([path, replacement]) => {
    if (!path.length) return replacement;
    const copy = structuredClone(value) as any;
    let target = copy;
    for (const key of path.slice(0, -1)) target = target[key];
    target[path[path.length - 1]] = replacement;
    return copy;
  });
}

const deepJson = fc
  .tuple(fc.integer({ min: 500, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '"x"' + '}'.repeat(depth),
  );
const rawBodies = fc.oneof(
  deepJson,
  fc.constantFrom('{', '{"a":1,}', 'null', '[]', '"x"', '123', '{"__proto__":{"x":1}}', '{"a":"\\ud800"}', '\u0000'),
);

function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate has no UTF-8 form; send the bytes a careless client would (CESU-8).
    return value
      .replace(/[\ud800-\udfff]/g, '\u0001')
      .split('\u0001')
      .map((part) => encodeURIComponent(part))
      .join('%ED%A0%80');
  }
}
const asParam = (v: Json): string =>
  typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);

// ---- requests -------------------------------------------------------------------------------------
interface Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

function requestArbitrary(
  op: Operation,
  realIds: string[],
  keys: { all: string; readOnly: string },
): fc.Arbitrary<Request> {
  const idArb = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...realIds) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.integer({ min: 501, max: 6_000 }).map((n) => 'i'.repeat(n)) },
    { weight: 1, arbitrary: hostileString },
  );
  const paramArb = (p: Param): fc.Arbitrary<string | undefined> => {
    if (p.in === 'path')
      return idArb.chain((id) =>
        fc.oneof(
          { weight: 5, arbitrary: fc.constant(id) },
          { weight: 1, arbitrary: schemaArbitrary(paramSchema(p), resolve).map(asParam) },
        ),
      );
    const valueArb = fc.oneof(
      { weight: 4, arbitrary: schemaArbitrary(paramSchema(p), resolve).map(asParam) },
      { weight: 1, arbitrary: hostileString },
      { weight: 1, arbitrary: idArb },
    );
    return p.required ? valueArb : fc.option(valueArb, { nil: undefined, freq: 2 });
  };
  const bodyArb: fc.Arbitrary<string | undefined> = op.body
    ? schemaArbitrary(op.body.schema, resolve).chain((valid) =>
        fc
          .oneof({ weight: 4, arbitrary: fc.constant(valid) }, { weight: 3, arbitrary: mutate(valid) })
          .map((v) => JSON.stringify(v))
          .chain((json) => fc.oneof({ weight: 6, arbitrary: fc.constant(json) }, { weight: 1, arbitrary: rawBodies })),
      )
    : fc.option(rawBodies, { nil: undefined, freq: 10 });
  const authArb = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${keys.all}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${keys.readOnly}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `Bearer ${generateApiKey()}`,
        'Bearer nope',
        '',
        'Basic abc',
        `Bearer ${'k'.repeat(5000)}`,
      ),
    },
  );
  return fc
    .record({
      params: fc.tuple(...op.params.map(paramArb)),
      body: bodyArb,
      auth: authArb,
      contentType: fc.oneof(
        { weight: 12, arbitrary: fc.constant(op.body?.mediaType ?? 'application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
          ),
        },
      ),
    })
    .map(({ params, body, auth, contentType }) => {
      let url = op.path;
      const query: string[] = [];
      const headers: Record<string, string> = {};
      op.params.forEach((p, i) => {
        const value = params[i];
        if (value === undefined) return;
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encode(value || 'x'));
        else if (p.in === 'query') query.push(`${encode(p.name)}=${encode(value)}`);
        // Header values must be valid HTTP: the hostile part is the length and content, not control bytes.
        else if (p.in === 'header') headers[p.name] = value.replace(/[^\x20-\x7e]/g, '?').slice(0, 8_000);
      });
      url = url.replace(/\{[^}]+\}/g, 'x');
      if (query.length) url += `?${query.join('&')}`;
      if (auth) headers.authorization = auth;
      if (body !== undefined) headers['content-type'] = contentType;
      const shown = (v: string | undefined) => (v && v.length > 300 ? `${v.slice(0, 300)}… (${v.length} chars)` : v);
      // Counterexamples are printed short: a 20,000-level body would otherwise flood the report.
      return {
        method: op.method,
        url,
        headers,
        payload: body,
        [fc.toStringMethod]: () =>
          JSON.stringify({
            method: op.method,
            url: shown(url),
            headers: { ...headers, authorization: shown(headers.authorization) },
            payload: shown(body),
          }),
      };
    });
}

// ---- the run --------------------------------------------------------------------------------------
let t: TestApp;
let acme: TestTenant;
const realIds: string[] = [];
const keys = { all: '', readOnly: '' };

beforeAll(async () => {
  console.log(`openapi fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${TOTAL_RUNS} requests`);
  t = await createTestApp({
    LOG_LEVEL: 'silent',
    WEBHOOK_TIMEOUT_MS: '1000',
    PRE_AUTH_RATE_LIMIT_PER_MINUTE: '100000',
  });
  acme = await t.tenant();
  keys.all = acme.key;
  keys.readOnly = (await acme.newKey({ scopes: 'assets:read,tools:read' })).key;
  const seed = async (url: string, body: unknown) => {
    const res = await t.api.post(url, acme.key, body);
    JSON.stringify(res.json(), (k, v) => {
      if (typeof v === 'string' && (k === 'id' || k.endsWith('Id')) && !realIds.includes(v)) realIds.push(v);
      return v;
    });
  };
  await seed('/api/v1/assets', { nickname: 'Fuzz truck', assetClass: 'trailer', meter: 'HOURS' });
  await seed('/api/v1/yards', { name: 'Fuzz yard' });
  await seed('/api/v1/projects', { name: 'Fuzz project', code: 'FZ-1' });
  await seed('/api/v1/tools', { name: 'Fuzz drill' });
  await seed('/api/v1/tools', { name: 'Fuzz screws', isConsumable: true, stockLevel: 10 });
  await seed('/api/v1/webhooks', { url: 'https://127.0.0.1:1/hook', events: ['asset.created'] });
  const assetId = realIds[0];
  await seed('/api/v1/work-orders', { assetId, title: 'Fuzz work order' });
  await seed('/api/v1/flags', { assetId, severity: 'LOW', note: 'fuzz' });
  await seed('/api/v1/hours', { assetId, hoursReading: 10 });
  await seed('/api/v1/repairs', { assetId, description: 'fuzz', cost: 1 });
  realIds.push(acme.userId, acme.orgId);
}, 120_000);
afterAll(() => t?.close());

describe('fuzzing every operation of openapi.yaml', () => {
  const ops = operations();

  it('finds the operations', () => {
    expect(ops.length).toBeGreaterThan(10);
  });

  it(`never answers 5xx and always uses the error envelope on 4xx (${TOTAL_RUNS} requests)`, async () => {
    const perOp = Math.ceil(TOTAL_RUNS / ops.length);
    const seen = new Map<string, number>();
    let sent = 0;
    for (const [index, op] of ops.entries()) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op, realIds, keys), async (req) => {
          sent += 1;
          const res = await t.app.inject({
            method: req.method as any,
            url: req.url,
            headers: req.headers,
            payload: req.payload,
          });
          const where = `${op.id}: ${req.method} ${req.url.slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
          seen.set(op.id, (seen.get(op.id) ?? 0) + 1);
          if (res.statusCode >= 500) throw new Error(`5xx from ${where}`);
          if (res.statusCode >= 400 && req.method !== 'HEAD') {
            let body: any;
            try {
              body = JSON.parse(res.body);
            } catch {
              throw new Error(`4xx without a JSON body from ${where}`);
            }
            if (body?.ok !== false || typeof body.error !== 'string')
              throw new Error(`4xx without the error envelope from ${where}`);
            if (res.statusCode === 422 && (typeof body.fieldErrors !== 'object' || body.fieldErrors === null)) {
              throw new Error(`422 without fieldErrors from ${where}`);
            }
          }
        }),
        // One seed per operation derived from the run's seed, so adding an operation does not reshuffle the others.
        { seed: (SEED + index * 7919) % 2 ** 31, numRuns: perOp, endOnFailure: true },
      );
    }
    expect(sent).toBeGreaterThanOrEqual(TOTAL_RUNS);
    expect([...seen.keys()].sort()).toEqual(ops.map((o) => o.id).sort());
  }, 600_000);
});
