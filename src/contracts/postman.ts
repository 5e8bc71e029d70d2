import type { FastifyInstance } from 'fastify';
import { openApiDocument } from './openapi.ts';
import { operationsOf } from './openapi-rules.ts';
import { WALKTHROUGH, missingSteps, type Check, type Step } from './walkthrough.ts';

type Json = Record<string, any>;

const POSTMAN_SCHEMA = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

/**
 * A Postman v2.1 collection that runs as an integrator's first session (src/contracts/walkthrough.ts): every
 * operation in a sensible order, ids created by one request chained into the next through collection
 * variables, and test scripts asserting the status and the key fields of every answer, so `newman run` fails
 * when the API regresses. Only `baseUrl` and `apiKey` need setting (`webhookUrl` when the server cannot reach
 * the default receiver). Output is deterministic so it can be committed.
 */
export function postmanCollection(openapi: Json): Json {
  const byId = new Map(operationsOf(openapi).map((o) => [o.op.operationId as string, o]));
  const missing = missingSteps([...byId.keys()]);
  if (missing.length) {
    throw new Error(
      `The Postman walkthrough has no step for: ${missing.join(', ')}. Add one to its part under src/contracts/walkthrough/ ` +
        '(request, expected status, ids to save, fields to check); the conformance test runs it too.',
    );
  }
  const folders = new Map<string, Json[]>();
  WALKTHROUGH.forEach((step, n) => {
    const found = byId.get(step.operationId);
    if (!found) throw new Error(`walkthrough step ${n} names unknown operation ${step.operationId}`);
    const tag: string = found.op.tags?.[0] ?? 'other';
    // Consecutive steps of one tag share a folder; the order of the walkthrough is kept.
    const key = `${String(folders.size).padStart(2, '0')} ${tag}`;
    const last = [...folders.keys()].pop();
    const folder = last?.endsWith(` ${tag}`) ? last : key;
    if (!folders.has(folder)) folders.set(folder, []);
    folders.get(folder)!.push(requestItem(step, n, found.path, found.method, found.op));
  });
  return {
    info: {
      name: openapi.info?.title ?? 'API',
      description:
        `${openapi.info?.description ?? ''}\n\nSet \`baseUrl\` to your server and \`apiKey\` to an API key with every scope, ` +
        'then run the whole collection: it walks through every operation, creating its own data. Set `webhookUrl` to an ' +
        'https URL your server may call if the default is not reachable from it.',
      schema: POSTMAN_SCHEMA,
      version: openapi.info?.version,
    },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{apiKey}}', type: 'string' }] },
    event: PACING,
    variable: [
      { key: 'baseUrl', value: openapi.servers?.[0]?.url ?? 'http://localhost:3000', type: 'string' },
      { key: 'apiKey', value: '', type: 'string' },
      { key: 'webhookUrl', value: 'https://example.com/fleet-webhook', type: 'string' },
      // A machine key no feed has listed: linking it answers 404, as the walkthrough documents.
      { key: 'equipmentKey', value: 'CAT0320GCZBK01234', type: 'string' },
    ],
    item: [...folders].map(([name, item]) => ({ name: name.replace(/^\d+ /, ''), item })),
  };
}

/**
 * The walkthrough sends more requests than a key's default allowance of 60 a minute: every answer's
 * X-RateLimit-* headers are remembered, and when the window is spent the next request waits for its reset.
 */
const PACING = [
  {
    listen: 'prerequest',
    script: {
      type: 'text/javascript',
      exec: [
        "var remaining = pm.collectionVariables.get('rateLimitRemaining');",
        "var reset = Number(pm.collectionVariables.get('rateLimitReset'));",
        "if (remaining === '0' && reset) { var wait = reset * 1000 - Date.now() + 1000; if (wait > 0) setTimeout(function () {}, Math.min(wait, 61000)); }",
      ],
    },
  },
  {
    listen: 'test',
    script: {
      type: 'text/javascript',
      exec: [
        "if (pm.response.headers.has('X-RateLimit-Remaining')) {",
        "  pm.collectionVariables.set('rateLimitRemaining', pm.response.headers.get('X-RateLimit-Remaining'));",
        "  pm.collectionVariables.set('rateLimitReset', pm.response.headers.get('X-RateLimit-Reset'));",
        '}',
      ],
    },
  },
];

function requestItem(step: Step, n: number, path: string, method: string, op: Json): Json {
  const segments = path
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replace(/^\{(.+)\}$/, ':$1'));
  const query = Object.entries(step.query ?? {}).map(([key, value]) => ({ key, value }));
  const variable = Object.entries(step.params ?? {}).map(([key, value]) => ({ key, value }));
  const header = [
    ...(step.body !== undefined ? [{ key: 'Content-Type', value: 'application/json' }] : []),
    ...Object.entries(step.headers ?? {}).map(([key, value]) => ({ key, value })),
  ];
  const request: Json = {
    method: method.toUpperCase(),
    header,
    url: {
      raw: `{{baseUrl}}/${segments.join('/')}${query.length ? `?${query.map((q) => `${q.key}=${q.value}`).join('&')}` : ''}`,
      host: ['{{baseUrl}}'],
      path: segments,
      ...(query.length ? { query } : {}),
      ...(variable.length ? { variable } : {}),
    },
    description: [op.summary, op.description].filter(Boolean).join('\n\n'),
  };
  if (step.body !== undefined) {
    request.body = { mode: 'raw', raw: JSON.stringify(step.body, null, 2), options: { raw: { language: 'json' } } };
  } else if (step.rawBody !== undefined) {
    request.body = { mode: 'raw', raw: step.rawBody };
  }
  if (!op.security?.length) request.auth = { type: 'noauth' };
  return {
    id: `${String(n + 1).padStart(2, '0')}-${step.operationId}`,
    name: step.name ?? op.summary ?? step.operationId,
    request,
    event: [{ listen: 'test', script: { type: 'text/javascript', exec: testScript(step) } }],
    response: [],
  };
}

/** Postman test script lines: status, media type, checked fields (with `{{var}}` resolved), saved ids. */
function testScript(step: Step): string[] {
  const lines = [`pm.test('status is ${step.status}', function () { pm.response.to.have.status(${step.status}); });`];
  if (step.contentType) {
    lines.push(
      `pm.test('answers ${step.contentType}', function () { pm.expect(pm.response.headers.get('Content-Type')).to.include(${JSON.stringify(step.contentType)}); });`,
    );
    return lines;
  }
  lines.push(
    'var body = pm.response.json();',
    "function at(path) { return path.split('.').reduce(function (v, k) { return v == null ? undefined : v[k]; }, body); }",
    "function fill(v) { return typeof v === 'string' ? v.replace(/\\{\\{(\\w+)\\}\\}/g, function (m, n) { return pm.collectionVariables.get(n); }) : v; }",
  );
  for (const check of step.checks ?? []) lines.push(checkLine(check));
  for (const [name, at] of Object.entries(step.save ?? {})) {
    lines.push(
      `pm.test('returns ${at}', function () { pm.expect(at(${JSON.stringify(at)})).to.be.a('string'); });`,
      `pm.collectionVariables.set(${JSON.stringify(name)}, at(${JSON.stringify(at)}));`,
    );
  }
  return lines;
}

function checkLine(check: Check): string {
  const path = JSON.stringify(check.path);
  if ('equals' in check) {
    return `pm.test('${check.path} is ${String(check.equals).replace(/'/g, '')}', function () { pm.expect(at(${path})).to.eql(fill(${JSON.stringify(check.equals)})); });`;
  }
  return `pm.test('${check.path} is a${check.type === 'array' || check.type === 'object' ? 'n' : ''} ${check.type}', function () { pm.expect(at(${path})).to.be.an(${JSON.stringify(check.type)}); });`;
}

export const renderPostmanCollection = async (app: FastifyInstance) =>
  `${JSON.stringify(postmanCollection(await openApiDocument(app)), null, 2)}\n`;
