import { Parser } from '@asyncapi/parser';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENT_TYPES, eventCatalog } from '../../src/events/catalog.ts';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { EXAMPLE_SECRET } from '../../src/contracts/asyncapi.ts';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { loadPublishedVerifier } from '../helpers/delivery/harness.ts';
import { parseYaml } from '../helpers/contracts/yaml-document.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /asyncapi.yaml', () => {
  it('is a valid AsyncAPI 2.6 document with one channel per event, the envelope, headers and signature scheme', async () => {
    const res = await t.api.get('/asyncapi.yaml');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('yaml');
    const { document, diagnostics } = await new Parser().parse(res.body);
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    expect(document).toBeDefined();
    expect(document!.version()).toBe('2.6.0');
    expect(
      document!
        .channels()
        .all()
        .map((c) => c.address())
        .sort(),
    ).toEqual([...EVENT_TYPES].sort());

    const raw = parseYaml(res.body);
    expect(raw.components.schemas.WebhookEnvelope.required).toEqual([
      'id',
      'eventId',
      'event',
      'organizationId',
      'sentAt',
      'data',
    ]);
    expect(Object.keys(raw.components.schemas.WebhookHeaders.properties)).toEqual(
      expect.arrayContaining([
        'X-Service-Signature',
        'X-Service-Timestamp',
        'X-Service-Event',
        'X-Service-Test',
        'X-Legacy-Signature',
        'X-Legacy-Timestamp',
        'X-Legacy-Event',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]),
    );
    expect(raw.components.securitySchemes.webhookSignature).toMatchObject({
      type: 'httpApiKey',
      in: 'header',
      name: 'X-Service-Signature',
    });
  });

  it('carries each event payload schema and a correctly signed, schema-valid example', async () => {
    const raw = parseYaml((await t.api.get('/asyncapi.yaml')).body);
    const { verifyWebhook } = await loadPublishedVerifier();
    for (const event of EVENT_TYPES) {
      const message = Object.values<any>(raw.components.messages).find((m) => m.name === event);
      expect(message, event).toBeDefined();
      const dataSchema = raw.components.schemas[message.payload.allOf[1].properties.data.$ref.split('/').pop()];
      const shape = (eventCatalog[event].data as unknown as { shape: Record<string, unknown> }).shape;
      expect(Object.keys(dataSchema.properties).sort()).toEqual(Object.keys(shape).sort());
      const [example] = message.examples;
      expect(eventCatalog[event].data.safeParse(example.payload.data).success, event).toBe(true);
      const headers = Object.fromEntries(Object.entries<string>(example.headers).map(([k, v]) => [k.toLowerCase(), v]));
      const rawBody = JSON.stringify(example.payload);
      expect(verifyWebhook(rawBody, headers, EXAMPLE_SECRET, Number(headers['x-service-timestamp']))).toBe(true);
      // The Standard Webhooks headers of the example verify with the official library and the published secret.
      expect(headers['webhook-id']).toBe(example.payload.id);
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Number(headers['webhook-timestamp']) * 1000);
      try {
        expect(new StandardWebhook(EXAMPLE_SECRET).verify(rawBody, headers), event).toEqual(example.payload);
      } finally {
        vi.useRealTimers();
      }
    }
  });
});

describe('GET /postman_collection.json', () => {
  it('is a Postman v2.1 collection with bearer auth, a baseUrl variable and every OpenAPI operation', async () => {
    const res = await t.api.get('/postman_collection.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    const collection = res.json();
    expect(collection.info.schema).toBe('https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
    expect(collection.auth).toEqual({
      type: 'bearer',
      bearer: [{ key: 'token', value: '{{apiKey}}', type: 'string' }],
    });
    expect(collection.variable.map((v: { key: string }) => v.key)).toEqual(
      expect.arrayContaining(['baseUrl', 'apiKey']),
    );

    const openapi = parseYaml((await t.api.get('/openapi.yaml')).body);
    const operations = Object.entries<Record<string, any>>(openapi.paths).flatMap(([path, item]) =>
      ['get', 'post', 'put', 'patch', 'delete']
        .filter((m) => item[m])
        .map((m) => ({ key: `${m.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`, op: item[m] })),
    );
    const requests = collection.item.flatMap((folder: { item: any[] }) => folder.item);
    expect(operations.length).toBeGreaterThan(10);
    // A walkthrough: every operation at least once (some twice, e.g. CSV and JSON), each request asserting its status.
    for (const { key, op } of operations) {
      const items = requests.filter((r: any) => r.id.endsWith(`-${op.operationId}`));
      expect(items.length, key).toBeGreaterThan(0);
      for (const item of items) {
        expect(`${item.request.method} /${item.request.url.path.join('/')}`).toBe(key);
        expect(item.request.url.raw.startsWith('{{baseUrl}}/api/v1/')).toBe(true);
        if (!op.security.length) expect(item.request.auth).toEqual({ type: 'noauth' });
        // A JSON body parses; a multipart one (an upload) is sent as written, with its boundary in Content-Type. An
        // operation taking either (POST /imports) is checked as the request sends it.
        const type = item.request.header?.find((h: any) => /^content-type$/i.test(h.key))?.value ?? '';
        const multipart = /^multipart\/form-data/.test(type);
        if (op.requestBody?.content?.['application/json'] && !multipart)
          expect(() => JSON.parse(item.request.body.raw)).not.toThrow();
        if (op.requestBody?.content?.['multipart/form-data'] && !op.requestBody?.content?.['application/json'])
          expect(type).toMatch(/boundary=/);
        if (multipart) expect(type).toMatch(/boundary=/);
        for (const v of item.request.url.variable ?? [])
          expect(v.value, `${item.id} :${v.key}`).toMatch(/^\{\{\w+\}\}$/);
        const script = item.event.find((e: any) => e.listen === 'test').script.exec.join('\n');
        expect(script, item.id).toContain('pm.response.to.have.status(');
      }
    }
    const createWebhook = requests.find((r: any) => r.id.endsWith('-createWebhook'));
    expect(Object.keys(JSON.parse(createWebhook.request.body.raw)).sort()).toEqual(['description', 'events', 'url']);
  });
});
