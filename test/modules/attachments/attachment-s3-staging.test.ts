import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { startS3rver, type TestBucket } from '../../helpers/app/s3rver.ts';

let t: TestApp;
let acme: TestTenant;
let bucket: TestBucket;
let assetId: string;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  bucket = await startS3rver('fleet-staging');
  t = await createTestApp({ ...bucket.env, S3_PREFIX: 'att/' });
  acme = await t.tenant('Acme');
  assetId = await makeAsset(t, acme.key);
});
afterAll(async () => {
  await t.close();
  await bucket.close();
});

const keys = async () => {
  const out: string[] = [];
  for await (const { key } of t.deps.services.attachments.storage.list()) out.push(key);
  return out;
};

async function presigned(bytes: Buffer) {
  const res = await t.api.post('/api/v1/attachments/uploads', acme.key, {
    subjectType: 'asset',
    subjectId: assetId,
    filename: 'note.txt',
    contentType: 'text/plain',
    size: bytes.length,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { attachmentId: string; upload: { url: string; headers: Record<string, string> } };
}

describe('a presigned upload on S3', () => {
  it('is served as verified: a later PUT to the same URL does not change the bytes', async () => {
    const bytes = Buffer.from('the verified bytes');
    const { attachmentId, upload } = await presigned(bytes);
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes })).status).toBe(200);
    const done = await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key);
    expect(done.statusCode, done.body).toBe(200);
    expect(await keys()).toContain(`att/${attachmentId}`);
    expect(await keys()).not.toContain(`att/incoming/${attachmentId}`);

    const forged = Buffer.from('the swapped bytes!');
    expect(forged.length).toBe(bytes.length);
    // The URL is still valid: the PUT succeeds, but writes nothing that is served.
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: forged })).status).toBe(200);
    const content = await t.api.get(`/api/v1/attachments/${attachmentId}/content`, acme.key);
    expect(content.statusCode).toBe(200);
    expect(content.rawPayload.equals(bytes)).toBe(true);
    expect(content.headers.etag).toBe(`"${sha(bytes)}"`);
  });

  it('the sweep keeps the staging object of a PENDING upload and removes one no row names', async () => {
    const bytes = Buffer.from('pending bytes');
    const pending = await presigned(bytes);
    await fetch(pending.upload.url, { method: 'PUT', headers: pending.upload.headers, body: bytes });
    const gone = await presigned(bytes);
    await fetch(gone.upload.url, { method: 'PUT', headers: gone.upload.headers, body: bytes });
    await t.db.prisma.attachment.delete({ where: { id: gone.attachmentId } });
    // Within the PENDING lifetime, past the grace period of orphans.
    await t.deps.services.attachments.sweep(new Date(Date.now() + 7 * 3600_000));
    const left = await keys();
    expect(left).toContain(`att/incoming/${pending.attachmentId}`);
    expect(left).not.toContain(`att/incoming/${gone.attachmentId}`);
    const done = await t.api.post(`/api/v1/attachments/${pending.attachmentId}/complete`, acme.key);
    expect(done.statusCode, done.body).toBe(200);
  });
});

describe('a bucket that does not answer', () => {
  it('is 503 storage_unavailable for a presigned upload and its complete', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const dead = await createTestApp({ ...bucket.env, S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_TIMEOUT_MS: '300' });
    try {
      const tenant = await dead.tenant('Dead');
      const a = await makeAsset(dead, tenant.key);
      const start = await dead.api.post('/api/v1/attachments/uploads', tenant.key, {
        subjectType: 'asset',
        subjectId: a,
        filename: 'a.txt',
        contentType: 'text/plain',
        size: 2,
      });
      expect(start.statusCode, start.body).toBe(503);
      expect(start.json()).toMatchObject({ error: 'storage_unavailable' });
      const row = await dead.db.prisma.attachment.create({
        data: {
          orgId: tenant.orgId,
          subjectType: 'asset',
          subjectId: a,
          filename: 'a.txt',
          contentType: 'text/plain',
          size: 2,
          storageKey: 'incoming/x',
        },
      });
      const done = await dead.api.post(`/api/v1/attachments/${row.id}/complete`, tenant.key);
      expect(done.statusCode, done.body).toBe(503);
      expect(done.json()).toMatchObject({ error: 'storage_unavailable' });
    } finally {
      await dead.close();
      silent.close();
    }
  });
});
