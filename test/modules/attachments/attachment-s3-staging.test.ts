import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { startS3App, withSilentBucket, type S3App } from '../../helpers/app/s3rver.ts';

let s3: S3App;
let t: TestApp;
let acme: TestTenant;
let assetId: string;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  s3 = await startS3App('fleet-staging', { env: { S3_PREFIX: 'att/' } });
  ({ t, acme, assetId } = s3);
});
afterAll(() => s3.close());

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
    expect(await s3.keys()).toContain(`att/${attachmentId}`);
    expect(await s3.keys()).not.toContain(`att/incoming/${attachmentId}`);

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
    const left = await s3.keys();
    expect(left).toContain(`att/incoming/${pending.attachmentId}`);
    expect(left).not.toContain(`att/incoming/${gone.attachmentId}`);
    const done = await t.api.post(`/api/v1/attachments/${pending.attachmentId}/complete`, acme.key);
    expect(done.statusCode, done.body).toBe(200);
  });
});

describe('a bucket that does not answer', () => {
  it('is 503 storage_unavailable for a presigned upload and its complete', () =>
    withSilentBucket(s3.bucket.env, async (dead, tenant, a) => {
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
    }));
});
