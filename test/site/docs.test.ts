import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { prefersHtml } from '../../src/site/docs.routes.ts';
import { EVENT_TYPES } from '../../src/events/catalog.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const CSP_EXTERNAL = /https?:|\*|blob:/;

describe('GET /', () => {
  it('answers JSON with the entry points to programs (no Accept, */*, application/json)', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'text/html;q=0.5, application/json']) {
      const res = await t.api.get('/', null, accept ? { accept } : {});
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.vary).toMatch(/Accept/);
      expect(res.json()).toEqual({
        ok: true,
        name: 'Fleet Operations API',
        api: '/api/v1',
        links: {
          docs: '/docs',
          webhooks: '/docs/webhooks',
          openapi: '/openapi.yaml',
          asyncapi: '/asyncapi.yaml',
          health: '/api/v1/health',
        },
      });
    }
  });

  it('answers a small HTML page to browsers, linking the docs, both contracts and the health URL', async () => {
    const res = await t.api.get('/', null, {
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).not.toMatch(CSP_EXTERNAL);
    for (const href of ['/docs', '/docs/webhooks', '/openapi.yaml', '/asyncapi.yaml', '/api/v1/health']) {
      expect(res.body).toContain(`href="${href}"`);
    }
    // Every link on it answers.
    for (const href of ['/docs', '/docs/webhooks', '/openapi.yaml', '/asyncapi.yaml', '/api/v1/health']) {
      expect((await t.api.get(href)).statusCode, href).toBe(200);
    }
  });

  it('prefers HTML only when text/html is acceptable at least as much as JSON', () => {
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('text/*')).toBe(true);
    expect(prefersHtml('application/json, text/html')).toBe(true);
    expect(prefersHtml('application/json;q=1, text/html;q=0.9')).toBe(false);
    expect(prefersHtml('text/html;q=0')).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml(undefined)).toBe(false);
  });
});

describe('GET /docs', () => {
  it('is public HTML under a policy that allows nothing external, loading only its own hashed scripts', async () => {
    const res = await t.api.get('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(CSP_EXTERNAL);
    const scripts = [...res.body.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts).toEqual([
      expect.stringMatching(/^ src="\/docs\/assets\/scalar-api-reference\.[0-9a-f]{16}\.js"$/),
      expect.stringMatching(/^ src="\/docs\/assets\/reference-init\.[0-9a-f]{16}\.js"$/),
    ]);
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(res.body).toContain('href="/docs/webhooks"');
  });

  it('serves the bundle from the npm package, gzipped when accepted, cacheable for good', async () => {
    const page = await t.api.get('/docs');
    const [bundleUrl, initUrl] = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    const plain = await t.api.get(bundleUrl);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toContain('@scalar/api-reference');
    const zipped = await t.api.get(bundleUrl, null, { 'accept-encoding': 'br, gzip;q=0.8' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    expect(gunzipSync(zipped.rawPayload).equals(plain.rawPayload)).toBe(true);

    const init = await t.api.get(initUrl);
    expect(init.statusCode).toBe(200);
    for (const option of [
      'withDefaultFonts: false',
      'telemetry: false',
      'hideClientButton: true',
      'agent: { disabled: true }',
      "url: '/openapi.yaml'",
    ]) {
      expect(init.body).toContain(option);
    }
    expect(init.body).not.toContain('proxyUrl');
  });

  it('answers 404 (API error body) for an unknown asset or a stale hash', async () => {
    for (const url of [
      '/docs/assets/scalar-api-reference.0000000000000000.js',
      '/docs/assets/nope.0000000000000000.js',
      '/docs/assets/..%2fpackage.json',
      '/docs/assets/constructor.0000000000000000.js',
    ]) {
      const res = await t.api.get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
    }
  });
});

describe('GET /docs/webhooks', () => {
  it('lists every event of the catalog with its schema and an example, under the same policy', async () => {
    const res = await t.api.get('/docs/webhooks');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).not.toMatch(CSP_EXTERNAL);
    for (const event of EVENT_TYPES) {
      expect(res.body).toContain(`<h3><code>${event}</code></h3>`);
      expect(res.body).toContain(`&quot;event&quot;: &quot;${event}&quot;`);
    }
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Service-Signature']) {
      expect(res.body).toContain(`<code>${header}</code>`);
    }
    expect(res.body).not.toContain('<script');
  });

  it('escapes everything: example values with quotes, code with < and &', async () => {
    const body = (await t.api.get('/docs/webhooks')).body;
    // tool examples name 'Impact wrench 1/2"'; the Python code contains "->" and the shell "&&"-free redirects.
    expect(body).toContain('Impact wrench 1/2\\&quot;');
    expect(body).toContain('-&gt; None:');
    expect(body).not.toMatch(/"Impact wrench 1\/2\\""/);
    const text = body.replace(
      /<\/?(html|head|meta|link|title|style|body|header|nav|main|strong|a|h[1-3]|p|ul|li|code|pre|table|thead|tbody|tr|th|td|details|summary|section)\b[^>]*>/g,
      '',
    );
    // Only the page's own tags remain once those are removed: no '<' came from the data or the code samples.
    const styleless = text.replace(/<style>[\s\S]*?<\/style>/, '').replace('<!doctype html>', '');
    expect(styleless).not.toMatch(/<[a-z!/]/i);
  });
});
