import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { TINY_PNG, uploadFile } from '../../helpers/app/attachments.ts';
import { startS3App, withSilentBucket, type S3App } from '../../helpers/app/s3rver.ts';

let s3: S3App;
let t: TestApp;
let acme: TestTenant;
let assetId: string;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const asset = () => ({ subjectType: 'asset', subjectId: assetId });

beforeAll(async () => {
  // No bucket yet: the service creates it before its first write.
  s3 = await startS3App('fleet-attachments', {
    createBucket: false,
    env: { ATTACHMENT_MAX_BYTES: String(12 * 1024 * 1024) },
  });
  ({ t, acme, assetId } = s3);
});
afterAll(() => s3.close());

const objectCount = async () => (await s3.keys()).length;

describe('attachments on S3 (s3rver)', () => {
  it('streams a multipart upload into the bucket and serves it byte-identical, with ranges and ETag', async () => {
    // Past one 5 MiB part: a multipart upload.
    const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(6 * 1024 * 1024, 7)]);
    const res = await uploadFile(t, acme.key, asset(), { name: 'manual.pdf', bytes });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ sha256: sha(bytes), size: bytes.length, contentType: 'application/pdf' });
    const id = res.json().attachmentId;
    const body = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key);
    expect(body.statusCode).toBe(200);
    expect(sha(body.rawPayload)).toBe(sha(bytes));
    expect(body.headers.etag).toBe(`"${sha(bytes)}"`);
    const part = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key, { range: 'bytes=-4' });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.equals(bytes.subarray(-4))).toBe(true);
    expect(
      (await t.api.get(`/api/v1/attachments/${id}/content`, acme.key, { 'if-none-match': `"${sha(bytes)}"` }))
        .statusCode,
    ).toBe(304);
  });

  it('names a download by RFC 6266 on S3 too', async () => {
    const id = (await uploadFile(t, acme.key, asset(), { name: 'Fahrer Prüfung 1.png', bytes: TINY_PNG })).json()
      .attachmentId;
    const res = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Fahrer Prufung 1.png"; filename*=UTF-8''Fahrer%20Pr%C3%BCfung%201.png`,
    );
  });

  it('makes a thumbnail, and a delete removes the object and its thumbnail', async () => {
    const png = await sharp({ create: { width: 900, height: 300, channels: 3, background: '#00f' } })
      .png()
      .toBuffer();
    const before = await objectCount();
    const id = (await uploadFile(t, acme.key, asset(), { name: 'p.png', bytes: png })).json().attachmentId;
    const thumb = await t.api.get(`/api/v1/attachments/${id}/thumbnail`, acme.key);
    expect(thumb.statusCode, thumb.body).toBe(200);
    expect((await sharp(thumb.rawPayload).metadata()).width).toBe(512);
    expect(await objectCount()).toBe(before + 2);
    expect((await t.api.delete(`/api/v1/attachments/${id}`, acme.key)).statusCode).toBe(200);
    expect(await objectCount()).toBe(before);
  });

  it('refuses a lying type without leaving an object', async () => {
    const before = await objectCount();
    const res = await uploadFile(t, acme.key, asset(), {
      name: 'a.jpg',
      type: 'image/jpeg',
      bytes: Buffer.from('<html><script>1</script>'),
    });
    expect(res.statusCode).toBe(415);
    expect(await objectCount()).toBe(before);
  });

  it('a body cut mid-file leaves no object and no row', async () => {
    const { multipart } = await import('../../helpers/app/attachments.ts');
    const before = await objectCount();
    const rows = await t.db.prisma.attachment.count();
    const { payload, headers } = multipart(asset(), { name: 'cut.txt', bytes: Buffer.alloc(6 * 1024 * 1024, 'c') });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/attachments',
      headers: { ...headers, authorization: `Bearer ${acme.key}` },
      payload: payload.subarray(0, 5.5 * 1024 * 1024),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'upload_interrupted' });
    expect(await objectCount()).toBe(before);
    expect(await t.db.prisma.attachment.count()).toBe(rows);
  });

  it('presigned PUT straight to the bucket, then complete verifies the bytes', async () => {
    const bytes = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#f00' } })
      .jpeg()
      .toBuffer();
    const res = await t.api.post('/api/v1/attachments/uploads', acme.key, {
      ...asset(),
      filename: 'x.jpg',
      contentType: 'image/jpeg',
      size: bytes.length,
      sha256: sha(bytes),
    });
    expect(res.statusCode, res.body).toBe(201);
    const { attachmentId, upload } = res.json();
    expect(upload.url).toContain(s3.bucket.env.S3_ENDPOINT);
    expect((await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key)).statusCode).toBe(409);
    const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
    expect(put.status, await put.text()).toBe(200);
    const done = await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().attachment).toMatchObject({ status: 'READY', contentType: 'image/jpeg', sha256: sha(bytes) });
  });
});

describe('the sweep on S3', () => {
  it('removes the objects of rows deleted with their subject, and stale PENDING uploads', async () => {
    const toolId = (await t.api.post('/api/v1/tools', acme.key, { name: 'Grinder' })).json().toolId;
    await uploadFile(
      t,
      acme.key,
      { subjectType: 'tool', subjectId: toolId },
      { name: 'a.txt', bytes: Buffer.from('tool file') },
    );
    const before = await objectCount();
    await t.db.prisma.tool.delete({ where: { id: toolId } });
    const result = await t.deps.services.attachments.sweep(new Date(Date.now() + 2 * 24 * 3600_000));
    expect(result.orphansRemoved).toBeGreaterThanOrEqual(1);
    expect(await objectCount()).toBe(before - 1);
    expect(await t.db.prisma.attachment.count({ where: { status: 'READY' } })).toBeGreaterThan(0);
  });
});

describe('a bucket that does not answer', () => {
  it('is a 503 storage_unavailable within the timeout, not a hang', () =>
    withSilentBucket(s3.bucket.env, async (dead, tenant, a) => {
      const res = await uploadFile(
        dead,
        tenant.key,
        { subjectType: 'asset', subjectId: a },
        { name: 'a.txt', bytes: Buffer.from('hi') },
      );
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json(), res.body).toMatchObject({ error: 'storage_unavailable' });
    }));
});
