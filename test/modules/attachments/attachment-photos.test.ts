import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeTool } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { tempAttachmentsDir, uploadFile } from '../../helpers/app/attachments.ts';

let t: TestApp;
let acme: TestTenant;
let png: Buffer;
const storage = tempAttachmentsDir();

beforeAll(async () => {
  t = await createTestApp({ ATTACHMENTS_DIR: storage.dir, PUBLIC_BASE_URL: 'https://fleet.example.com' });
  acme = await t.tenant('Acme');
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#0a0' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await t.close();
  storage.remove();
});

describe('photoAttachmentId', () => {
  it("puts the photo's content URL in the flag and in flag.created", async () => {
    const assetId = await makeAsset(t, acme.key);
    const photo = (
      await uploadFile(t, acme.key, { subjectType: 'asset', subjectId: assetId }, { name: 'leak.png', bytes: png })
    ).json();
    const res = await t.api.post('/api/v1/flags', acme.key, {
      assetId,
      severity: 'RED',
      note: 'Leak',
      photoAttachmentId: photo.attachmentId,
    });
    expect(res.statusCode, res.body).toBe(201);
    const url = `https://fleet.example.com/api/v1/attachments/${photo.attachmentId}/content`;
    const flag = (await t.api.get(`/api/v1/flags/${res.json().flagId}`, acme.key)).json().flag;
    expect(flag.photoUrl).toBe(url);
    const event = await t.db.prisma.event.findFirstOrThrow({ where: { orgId: acme.orgId, type: 'flag.created' } });
    expect((event.data as { photoUrl: string }).photoUrl).toBe(url);
  });

  it('refuses a photo of another asset, a non-image and an unknown id with 422', async () => {
    const assetId = await makeAsset(t, acme.key);
    const otherAsset = await makeAsset(t, acme.key);
    const elsewhere = (
      await uploadFile(t, acme.key, { subjectType: 'asset', subjectId: otherAsset }, { name: 'a.png', bytes: png })
    ).json();
    const text = (
      await uploadFile(
        t,
        acme.key,
        { subjectType: 'asset', subjectId: assetId },
        { name: 'a.txt', bytes: Buffer.from('x') },
      )
    ).json();
    for (const id of [elsewhere.attachmentId, text.attachmentId, 'nope']) {
      const res = await t.api.post('/api/v1/flags', acme.key, { assetId, severity: 'YELLOW', photoAttachmentId: id });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().fieldErrors).toHaveProperty('photoAttachmentId');
    }
  });

  it("records the tool event's photoId on check-in and report", async () => {
    const toolId = await makeTool(t, acme.key);
    const photo = (
      await uploadFile(t, acme.key, { subjectType: 'tool', subjectId: toolId }, { name: 't.png', bytes: png })
    ).json();
    const res = await t.api.post(`/api/v1/tools/${toolId}/report`, acme.key, {
      description: 'Cracked',
      photoAttachmentId: photo.attachmentId,
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const event = await t.db.prisma.toolEvent.findUniqueOrThrow({ where: { id: res.json().eventId } });
    expect(event.photoId).toBe(photo.attachmentId);
    const bad = await t.api.post(`/api/v1/tools/${toolId}/checkin`, acme.key, { photoAttachmentId: 'nope' });
    expect(bad.statusCode).toBe(422);
  });
});

describe('presigned uploads past the JSON body limit', () => {
  it('takes a presigned upload larger than the JSON body limit', async () => {
    const bytes = Buffer.alloc(2 * 1024 * 1024, 'z');
    const { upload, attachmentId } = (
      await t.api.post('/api/v1/attachments/uploads', acme.key, {
        subjectType: 'asset',
        subjectId: await makeAsset(t, acme.key),
        filename: 'big.txt',
        contentType: 'text/plain',
        size: bytes.length,
      })
    ).json();
    const put = await t.app.inject({
      method: 'PUT',
      url: new URL(upload.url).pathname,
      headers: upload.headers,
      payload: bytes,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect((await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key)).json().attachment.size).toBe(
      bytes.length,
    );
  });
});
