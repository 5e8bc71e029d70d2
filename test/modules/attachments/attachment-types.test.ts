import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import {
  HEIC_HEAD,
  multipart,
  storedZip,
  tempAttachmentsDir,
  TINY_PNG,
  uploadFile,
} from '../../helpers/app/attachments.ts';
import { cleanFilename, textRefusal } from '../../../src/modules/attachments/attachment-types.rules.ts';
import { parseRange } from '../../../src/modules/attachments/attachment-range.rules.ts';
import { loadConfig } from '../../../src/config.ts';

let t: TestApp;
let acme: TestTenant;
let assetId: string;
const storage = tempAttachmentsDir();
const asset = () => ({ subjectType: 'asset', subjectId: assetId });

const DOCX = storedZip({
  '[Content_Types].xml':
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  'word/document.xml': '<w:document/>',
});
const OLE = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(1024)]);

beforeAll(async () => {
  t = await createTestApp({ ATTACHMENTS_DIR: storage.dir, ATTACHMENT_QUOTA_BYTES: '4000' });
  acme = await t.tenant('Acme');
  assetId = await makeAsset(t, acme.key);
});
afterAll(async () => {
  await t.close();
  storage.remove();
});

describe('type detection', () => {
  it('recognises Office documents from their container, whatever the name says', async () => {
    const docx = await uploadFile(t, acme.key, asset(), { name: 'report.pdf', type: 'application/pdf', bytes: DOCX });
    expect(docx.json(), docx.body).toMatchObject({
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    const xls = await uploadFile(t, acme.key, asset(), { name: 'costs.xls', bytes: OLE });
    expect(xls.json()).toMatchObject({ contentType: 'application/vnd.ms-excel' });
    // A compound file that does not call itself a legacy Office file (an installer, say) is refused.
    expect((await uploadFile(t, acme.key, asset(), { name: 'setup.msi', bytes: OLE })).statusCode).toBe(415);
    const zip = storedZip({ 'a.txt': 'hello' });
    expect((await uploadFile(t, acme.key, asset(), { name: 'a.docx', bytes: zip })).statusCode).toBe(415);
  });

  it('stores HEIC, but has no thumbnail for it (404 thumbnail_unavailable)', async () => {
    const res = await uploadFile(t, acme.key, asset(), { name: 'IMG_0001.HEIC', bytes: HEIC_HEAD });
    expect(res.json()).toMatchObject({ contentType: 'image/heic' });
    const thumb = await t.api.get(`/api/v1/attachments/${res.json().attachmentId}/thumbnail`, acme.key);
    expect(thumb.statusCode).toBe(404);
    expect(thumb.json()).toMatchObject({ error: 'thumbnail_unavailable' });
  });

  it('refuses an empty file and a malformed multipart body without a 500', async () => {
    const empty = await uploadFile(t, acme.key, asset(), { name: 'e.txt', bytes: Buffer.alloc(0) });
    expect(empty.statusCode).toBe(422);
    const { payload } = multipart(asset(), { name: 'a.txt', bytes: Buffer.from('x') });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/attachments',
      headers: { 'content-type': 'multipart/form-data; boundary=not-the-one', authorization: `Bearer ${acme.key}` },
      payload,
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
  });

  it('answers 413 quota_exceeded past ATTACHMENT_QUOTA_BYTES, for multipart and presigned uploads', async () => {
    const res = await uploadFile(t, acme.key, asset(), { name: 'q.txt', bytes: Buffer.alloc(5000, 'q') });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'quota_exceeded' });
    const presigned = await t.api.post('/api/v1/attachments/uploads', acme.key, {
      ...asset(),
      filename: 'q.txt',
      contentType: 'text/plain',
      size: 5000,
    });
    expect(presigned.json()).toMatchObject({ error: 'quota_exceeded' });
  });
});

describe('ATTACHMENT_TYPES', () => {
  it('narrows the accepted types and refuses names it cannot accept', async () => {
    const images = await createTestApp({ ATTACHMENTS_DIR: storage.dir, ATTACHMENT_TYPES: 'image/jpeg,image/png' });
    try {
      const tenant = await images.tenant();
      const a = await makeAsset(images, tenant.key);
      const res = await uploadFile(
        images,
        tenant.key,
        { subjectType: 'asset', subjectId: a },
        { name: 'a.txt', bytes: Buffer.from('text') },
      );
      expect(res.statusCode).toBe(415);
    } finally {
      await images.close();
    }
    await expect(createTestApp({ ATTACHMENTS_DIR: storage.dir, ATTACHMENT_TYPES: 'text/html' })).rejects.toThrow(
      /text\/html/,
    );
  });
});

describe('storage settings the sweep depends on', () => {
  it('refuses upload URLs that outlive the 24 h sweep, and an empty bucket prefix', () => {
    expect(() => loadConfig({ ATTACHMENT_UPLOAD_URL_TTL_SEC: String(24 * 3600 + 1) })).toThrow(
      /ATTACHMENT_UPLOAD_URL_TTL_SEC/,
    );
    expect(() => loadConfig({ S3_PREFIX: '' })).toThrow(/S3_PREFIX/);
    expect(loadConfig({ ATTACHMENT_UPLOAD_URL_TTL_SEC: String(24 * 3600) }).attachments.uploadUrlTtlSec).toBe(86_400);
  });
});

describe('rules', () => {
  it('keeps filenames as data: no path, no controls, no bidi tricks, bounded', () => {
    expect(cleanFilename('../../etc/passwd')).toBe('passwd');
    expect(cleanFilename('C:\\Users\\x\\photo.jpg')).toBe('photo.jpg');
    expect(cleanFilename('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(cleanFilename('a\r\nb.txt')).toBe('ab.txt');
    expect(cleanFilename('')).toBe('file');
    const long = cleanFilename(`${'x'.repeat(400)}.pdf`);
    expect(long).toHaveLength(255);
    expect(long.endsWith('.pdf')).toBe(true);
  });

  it('sniffs markup and scripts in text', () => {
    expect(textRefusal('\uFEFF  <!doctype html>')).toMatch(/HTML/);
    expect(textRefusal('hello <svg onload=1>')).toMatch(/HTML/);
    expect(textRefusal('#!/usr/bin/env node')).toMatch(/scripts/);
    expect(textRefusal('a < b and c > d')).toBeNull();
  });

  it('reads one byte range', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=95-200', 100)).toEqual({ start: 95, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
  });
});

describe('download names', () => {
  it('names a download by RFC 6266: an ASCII filename and the exact UTF-8 name in filename*', async () => {
    const id = (await uploadFile(t, acme.key, asset(), { name: 'Fahrer Prüfung 1.png', bytes: TINY_PNG })).json()
      .attachmentId;
    const res = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Fahrer Prufung 1.png"; filename*=UTF-8''Fahrer%20Pr%C3%BCfung%201.png`,
    );
    const inline = await t.api.get(`/api/v1/attachments/${id}/content?disposition=inline`, acme.key);
    expect(inline.headers['content-disposition']).toBe(
      `inline; filename="Fahrer Prufung 1.png"; filename*=UTF-8''Fahrer%20Pr%C3%BCfung%201.png`,
    );
    const other = (await uploadFile(t, acme.key, asset(), { name: '点検 1.png', bytes: TINY_PNG })).json().attachmentId;
    expect((await t.api.get(`/api/v1/attachments/${other}/content`, acme.key)).headers['content-disposition']).toBe(
      `attachment; filename="__ 1.png"; filename*=UTF-8''%E7%82%B9%E6%A4%9C%201.png`,
    );
  });
});
