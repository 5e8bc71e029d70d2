import jsqr from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';

const BASE = 'https://fleet.example.com';
let t: TestApp;
let acme: TestTenant;
let toolId: string;
let scanToken: string;
// jsqr is CommonJS: its typings describe the module object, the runtime default import is the function.
const jsQR = ((jsqr as unknown as { default?: unknown }).default ?? jsqr) as typeof jsqr.default;

beforeAll(async () => {
  t = await createTestApp({ PUBLIC_BASE_URL: BASE });
  acme = await t.tenant('Acme <Tools> & "Sons"');
  const res = await t.api.post('/api/v1/tools', acme.key, {
    name: '<script>alert(1)</script> Drill',
    category: 'Power & Air',
    notes: 'secret note',
    serial: 'SN-SECRET-1',
  });
  ({ toolId, scanToken } = res.json());
});
afterAll(() => t.close());

function decodePng(body: Buffer): string | undefined {
  const png = PNG.sync.read(body);
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}

describe('GET /tools/:id/qr', () => {
  it('is a 600px PNG by default that decodes to PUBLIC_BASE_URL/scan/<scanToken>', async () => {
    const res = await t.api.get(`/api/v1/tools/${toolId}/qr`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    const png = PNG.sync.read(res.rawPayload);
    expect(png.width).toBe(600);
    expect(decodePng(res.rawPayload)).toBe(`${BASE}/scan/${scanToken}`);
  });

  it('honours size within 64-2000 and clamps outside it', async () => {
    // The width in the PNG's header (IHDR): the test above decodes a whole image, and a 2000 px one is 16 MB.
    const width = async (size: string) => {
      const png = (await t.api.get(`/api/v1/tools/${toolId}/qr?size=${size}`, acme.key)).rawPayload;
      expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
      return png.readUInt32BE(16);
    };
    expect(await width('300')).toBe(300);
    expect(await width('10')).toBe(64);
    expect(await width('99999')).toBe(2000);
    expect((await t.api.get(`/api/v1/tools/${toolId}/qr?size=big`, acme.key)).statusCode).toBe(422);
  });

  it('renders SVG with fmt=svg; other formats are 422', async () => {
    const res = await t.api.get(`/api/v1/tools/${toolId}/qr?fmt=svg&size=256`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(res.body).toMatch(/^<svg[^>]*width="256"/);
    expect((await t.api.get(`/api/v1/tools/${toolId}/qr?fmt=gif`, acme.key)).statusCode).toBe(422);
  });
});

describe('GET /scan/:token', () => {
  it('is a public, escaped, mobile-friendly page with name, category, status and organisation only', async () => {
    await t.api.patch(`/api/v1/tools/${toolId}`, acme.key, { status: 'NEEDS_ATTENTION' });
    const res = await t.api.get(`/scan/${scanToken}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('name="viewport"');
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Drill');
    expect(res.body).not.toContain('<script>');
    expect(res.body).toContain('Power &amp; Air');
    expect(res.body).toContain('Needs attention');
    expect(res.body).toContain('Acme &lt;Tools&gt; &amp; &quot;Sons&quot;');
    for (const secret of ['secret note', 'SN-SECRET-1', toolId, acme.orgId]) expect(res.body).not.toContain(secret);
  });

  it('answers an unknown or malformed token with a 404 HTML page', async () => {
    for (const token of ['A'.repeat(32), 'x', '%3Cb%3E']) {
      const res = await t.api.get(`/scan/${token}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('Label not found');
    }
  });

  it('is not part of the OpenAPI document', async () => {
    const doc = await t.api.get('/openapi.yaml');
    expect(doc.body).not.toContain('/scan/');
    expect(doc.body).toContain('/api/v1/tools/{id}/qr');
  });
});
