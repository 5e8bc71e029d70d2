import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeTool } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { tempAttachmentsDir, uploadFile } from '../../helpers/app/attachments.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let assetId: string;
let foreignAttachmentId: string;
let jpeg: Buffer;
const storage = tempAttachmentsDir();

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const asset = () => ({ subjectType: 'asset', subjectId: assetId });

beforeAll(async () => {
  t = await createTestApp({ ATTACHMENTS_DIR: storage.dir, ATTACHMENT_MAX_BYTES: String(200_000) });
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  assetId = await makeAsset(t, acme.key);
  jpeg = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#c03' } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer();
  const foreignAsset = await makeAsset(t, other.key);
  foreignAttachmentId = (
    await uploadFile(
      t,
      other.key,
      { subjectType: 'asset', subjectId: foreignAsset },
      { name: 'a.txt', bytes: Buffer.from('hello') },
    )
  ).json().attachmentId;
});
afterAll(async () => {
  await t.close();
  storage.remove();
});

describe('POST /attachments (multipart)', () => {
  it('stores the file, detects its type from the bytes and answers 201', async () => {
    const res = await uploadFile(
      t,
      acme.key,
      { ...asset(), caption: 'Boom' },
      { name: 'photo.txt', type: 'text/plain', bytes: jpeg },
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      ok: true,
      attachmentId: expect.any(String),
      size: jpeg.length,
      sha256: sha(jpeg),
      contentType: 'image/jpeg',
    });
    const detail = (await t.api.get(`/api/v1/attachments/${res.json().attachmentId}`, acme.key)).json().attachment;
    expect(detail).toMatchObject({
      filename: 'photo.txt',
      caption: 'Boom',
      status: 'READY',
      subjectType: 'asset',
      subjectId: assetId,
    });
    const event = await t.db.prisma.event.findFirst({ where: { orgId: acme.orgId, type: 'attachment.created' } });
    expect(event).not.toBeNull();
  });

  it('downloads byte-identical content with headers, ETag 304 and ranges', async () => {
    const id = (await uploadFile(t, acme.key, asset(), { name: 'r\u202egnp.exe', bytes: jpeg })).json().attachmentId;
    const res = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(jpeg)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'image/jpeg',
      etag: `"${sha(jpeg)}"`,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
    });
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="rgnp.exe"/);
    const inline = await t.api.get(`/api/v1/attachments/${id}/content?disposition=inline`, acme.key);
    expect(inline.headers['content-disposition']).toMatch(/^inline/);
    expect(
      (await t.api.get(`/api/v1/attachments/${id}/content`, acme.key, { 'if-none-match': `"${sha(jpeg)}"` }))
        .statusCode,
    ).toBe(304);
    const part = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key, { range: 'bytes=10-19' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${jpeg.length}`);
    expect(part.rawPayload.equals(jpeg.subarray(10, 20))).toBe(true);
    const bad = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key, { range: `bytes=${jpeg.length}-` });
    expect(bad.statusCode).toBe(416);
  });

  it('honours If-Range: the range only while the validator still names these bytes', async () => {
    const id = (await uploadFile(t, acme.key, asset(), { name: 'r.jpg', bytes: jpeg })).json().attachmentId;
    const get = (ifRange: string) =>
      t.api.get(`/api/v1/attachments/${id}/content`, acme.key, { range: 'bytes=0-1', 'if-range': ifRange });
    const stale = await get('"another-version"');
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.equals(jpeg)).toBe(true);
    expect((await get(`"${sha(jpeg)}"`)).statusCode).toBe(206);
  });

  it('saves text under a text extension: markup named .html downloads as .html.txt', async () => {
    const id = (
      await uploadFile(t, acme.key, asset(), { name: 'notes.html', bytes: Buffer.from('plain words, no markup') })
    ).json().attachmentId;
    const res = await t.api.get(`/api/v1/attachments/${id}/content`, acme.key);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="notes\.html\.txt"/);
    expect((await t.api.get(`/api/v1/attachments/${id}`, acme.key)).json().attachment.filename).toBe('notes.html');
  });

  it('makes a WebP thumbnail of at most 512 px, upright, once', async () => {
    const id = (await uploadFile(t, acme.key, asset(), { name: 'p.jpg', bytes: jpeg })).json().attachmentId;
    const res = await t.api.get(`/api/v1/attachments/${id}/thumbnail`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    const meta = await sharp(res.rawPayload).metadata();
    expect(meta.format).toBe('webp');
    // EXIF orientation 6 turns the 1200x800 landscape into a portrait.
    expect([meta.width, meta.height]).toEqual([341, 512]);
    const again = await t.api.get(`/api/v1/attachments/${id}/thumbnail`, acme.key);
    expect(again.rawPayload.equals(res.rawPayload)).toBe(true);
    const text = (await uploadFile(t, acme.key, asset(), { name: 'n.txt', bytes: Buffer.from('note') })).json()
      .attachmentId;
    expect((await t.api.get(`/api/v1/attachments/${text}/thumbnail`, acme.key)).statusCode).toBe(404);
  });

  it('answers concurrent first requests for one thumbnail with the same image', async () => {
    const id = (await uploadFile(t, acme.key, asset(), { name: 'q.jpg', bytes: jpeg })).json().attachmentId;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => t.api.get(`/api/v1/attachments/${id}/thumbnail`, acme.key)),
    );
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.rawPayload.equals(answers[0].rawPayload)).toBe(true);
    }
  });

  it.each([
    ['HTML named .jpg', 'x.jpg', 'image/jpeg', '<!DOCTYPE html><html><script>alert(1)</script></html>'],
    ['SVG', 'x.png', 'image/png', '<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>'],
    ['XML', 'x.txt', 'text/plain', '<?xml version="1.0"?><a/>'],
    ['a script', 'run.txt', 'text/plain', '#!/bin/sh\nrm -rf /\n'],
    ['an executable', 'x.pdf', 'application/pdf', `MZ\x90\x00${'\x00'.repeat(200)}`],
    ['invalid UTF-8', 'x.txt', 'text/plain', Buffer.from([0x61, 0xff, 0xfe, 0x62])],
  ])('refuses %s with 415', async (_label, name, type, content) => {
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content, 'latin1');
    const res = await uploadFile(t, acme.key, asset(), { name, type, bytes });
    expect(res.statusCode, res.body).toBe(415);
    expect(res.json()).toMatchObject({ ok: false, error: 'unsupported_media_type' });
  });

  it('accepts CSV and PDF', async () => {
    const csv = await uploadFile(t, acme.key, asset(), { name: 'parts.csv', bytes: Buffer.from('part,qty\nseal,2\n') });
    expect(csv.json()).toMatchObject({ contentType: 'text/csv' });
    const pdf = await uploadFile(t, acme.key, asset(), {
      name: 'inv',
      bytes: Buffer.from('%PDF-1.4\n%\xe2\xe3\n1 0 obj<<>>endobj\n'),
    });
    expect(pdf.json()).toMatchObject({ contentType: 'application/pdf' });
  });

  it('answers 413 file_too_large past ATTACHMENT_MAX_BYTES and keeps nothing', async () => {
    const before = await t.db.prisma.attachment.count();
    const res = await uploadFile(t, acme.key, asset(), { name: 'big.txt', bytes: Buffer.alloc(300_000, 'a') });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'file_too_large' });
    expect(await t.db.prisma.attachment.count()).toBe(before);
    expect(readdirSync(path.join(storage.dir, 'tmp'))).toEqual([]);
  });

  it('needs the fields before the file (422) and the subject to exist (404)', async () => {
    const missing = await uploadFile(t, acme.key, {} as never, { name: 'a.txt', bytes: Buffer.from('x') });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().fieldErrors.subjectType).toMatch(/before the file/);
    const gone = await uploadFile(
      t,
      acme.key,
      { subjectType: 'tool', subjectId: assetId },
      { name: 'a.txt', bytes: Buffer.from('x') },
    );
    expect(gone.statusCode).toBe(404);
  });

  it('refuses text no column can store in the fields (422, never a 500)', async () => {
    for (const fields of [
      { ...asset(), caption: 'before\u0000after' },
      { subjectType: 'asset', subjectId: 'x\u0000y' },
    ]) {
      const res = await uploadFile(t, acme.key, fields, { name: 'a.txt', bytes: Buffer.from('x') });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    }
  });

  it("follows the subject's scopes", async () => {
    const { key } = await acme.newKey({ scopes: 'tools:read,tools:write' });
    const res = await uploadFile(t, key, asset(), { name: 'a.txt', bytes: Buffer.from('x') });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'missing_scope:assets:write' });
    const toolId = await makeTool(t, acme.key);
    const ok = await uploadFile(
      t,
      key,
      { subjectType: 'tool', subjectId: toolId },
      { name: 'a.txt', bytes: Buffer.from('x') },
    );
    expect(ok.statusCode).toBe(201);
    const read = await t.api.get(`/api/v1/attachments?subjectType=asset&subjectId=${assetId}`, key);
    expect(read.json()).toMatchObject({ error: 'missing_scope:assets:read' });
  });
});

describe('listing, caption, delete', () => {
  it('lists a record newest first with a cursor, patches the caption, deletes the row and bytes', async () => {
    const toolId = await makeTool(t, acme.key);
    const subject = { subjectType: 'tool', subjectId: toolId };
    const ids: string[] = [];
    for (const n of [1, 2, 3])
      ids.push(
        (
          await uploadFile(t, acme.key, subject, { name: `${n}.txt`, bytes: Buffer.from(`unique ${n} ${toolId}`) })
        ).json().attachmentId,
      );
    const page = (await t.api.get(`/api/v1/attachments?subjectType=tool&subjectId=${toolId}&limit=2`, acme.key)).json();
    expect(page.attachments.map((a: { attachmentId: string }) => a.attachmentId)).toEqual([ids[2], ids[1]]);
    const rest = (
      await t.api.get(
        `/api/v1/attachments?subjectType=tool&subjectId=${toolId}&limit=2&cursor=${page.nextCursor}`,
        acme.key,
      )
    ).json();
    expect(rest.attachments.map((a: { attachmentId: string }) => a.attachmentId)).toEqual([ids[0]]);
    expect(
      (await t.api.patch(`/api/v1/attachments/${ids[0]}`, acme.key, { caption: 'Label' })).json().attachment.caption,
    ).toBe('Label');
    const row = await t.db.prisma.attachment.findUniqueOrThrow({ where: { id: ids[0] } });
    const file = path.join(storage.dir, ...row.storageKey!.split('/'));
    expect(readdirSync(path.dirname(file))).toContain(path.basename(file));
    expect((await t.api.delete(`/api/v1/attachments/${ids[0]}`, acme.key)).statusCode).toBe(200);
    expect(readdirSync(path.dirname(file))).not.toContain(path.basename(file));
    expect((await t.api.get(`/api/v1/attachments/${ids[0]}`, acme.key)).statusCode).toBe(404);
  });

  it('removes the attachments of a deleted subject', async () => {
    const toolId = await makeTool(t, acme.key);
    const id = (
      await uploadFile(
        t,
        acme.key,
        { subjectType: 'tool', subjectId: toolId },
        { name: 'a.txt', bytes: Buffer.from('gone') },
      )
    ).json().attachmentId;
    await t.db.prisma.tool.delete({ where: { id: toolId } });
    expect((await t.api.get(`/api/v1/attachments/${id}`, acme.key)).statusCode).toBe(404);
  });
});

describe('presigned upload on local storage', () => {
  it('PUT to the signed URL without a key, then complete; the URL is single-use', async () => {
    const bytes = Buffer.from('presigned body\n');
    const res = await t.api.post('/api/v1/attachments/uploads', acme.key, {
      ...asset(),
      filename: 'notes.txt',
      contentType: 'text/plain',
      size: bytes.length,
      sha256: sha(bytes),
    });
    expect(res.statusCode, res.body).toBe(201);
    const { attachmentId, upload } = res.json();
    expect(upload).toMatchObject({ method: 'PUT', headers: { 'Content-Type': 'text/plain' } });
    const url = new URL(upload.url).pathname;
    expect((await t.api.get(`/api/v1/attachments/${attachmentId}`, acme.key)).json().attachment.status).toBe('PENDING');
    const early = await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key);
    expect(early.statusCode).toBe(409);
    const put = await t.app.inject({ method: 'PUT', url, headers: upload.headers, payload: bytes });
    expect(put.statusCode, put.body).toBe(200);
    const again = await t.app.inject({ method: 'PUT', url, headers: upload.headers, payload: bytes });
    expect(again.statusCode).toBe(409);
    const done = await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().attachment).toMatchObject({ status: 'READY', sha256: sha(bytes), size: bytes.length });
  });

  it('refuses a tampered token and a checksum mismatch', async () => {
    const bytes = Buffer.from('abc');
    const { upload } = (
      await t.api.post('/api/v1/attachments/uploads', acme.key, {
        ...asset(),
        filename: 'a.txt',
        contentType: 'text/plain',
        size: 3,
        sha256: sha(Buffer.from('xyz')),
      })
    ).json();
    const url = new URL(upload.url).pathname;
    // One character inside the token changed (the last ones may only carry base64 padding bits).
    const at = url.length - 10;
    const forged = url.slice(0, at) + (url[at] === 'A' ? 'B' : 'A') + url.slice(at + 1);
    const tampered = await t.app.inject({ method: 'PUT', url: forged, payload: bytes });
    expect(tampered.statusCode).toBe(403);
    const put = await t.app.inject({ method: 'PUT', url, headers: upload.headers, payload: bytes });
    expect(put.statusCode).toBe(422);
  });
});

securitySuite('attachments', () => ({ t, tenant: acme }), [
  {
    label: 'GET /attachments/:id',
    method: 'GET',
    path: () => `/api/v1/attachments/${foreignAttachmentId}`,
    scope: null,
    crossTenant: true,
  },
  {
    label: 'PATCH /attachments/:id',
    method: 'PATCH',
    path: () => `/api/v1/attachments/${foreignAttachmentId}`,
    scope: null,
    body: { caption: 'x' },
    crossTenant: true,
  },
  {
    label: 'DELETE /attachments/:id',
    method: 'DELETE',
    path: () => `/api/v1/attachments/${foreignAttachmentId}`,
    scope: null,
    crossTenant: true,
  },
  {
    label: 'GET /attachments/:id/content',
    method: 'GET',
    path: () => `/api/v1/attachments/${foreignAttachmentId}/content`,
    scope: null,
    crossTenant: true,
  },
  {
    label: 'GET /attachments/:id/thumbnail',
    method: 'GET',
    path: () => `/api/v1/attachments/${foreignAttachmentId}/thumbnail`,
    scope: null,
    crossTenant: true,
  },
  {
    label: 'POST /attachments/:id/complete',
    method: 'POST',
    path: () => `/api/v1/attachments/${foreignAttachmentId}/complete`,
    scope: null,
    crossTenant: true,
  },
  {
    label: 'GET /attachments',
    method: 'GET',
    path: () => `/api/v1/attachments?subjectType=asset&subjectId=${assetId}`,
    scope: null,
  },
  { label: 'POST /attachments/uploads', method: 'POST', path: () => '/api/v1/attachments/uploads', scope: null },
]);

describe('interrupted uploads and the sweep', () => {
  it('a body cut mid-file leaves no row and no bytes, and is not a 500', async () => {
    const { multipart } = await import('../../helpers/app/attachments.ts');
    const before = await t.db.prisma.attachment.count();
    const { payload, headers } = multipart(asset(), { name: 'cut.txt', bytes: Buffer.alloc(100_000, 'b') });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/attachments',
      headers: { ...headers, authorization: `Bearer ${acme.key}` },
      payload: payload.subarray(0, 50_000),
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(await t.db.prisma.attachment.count()).toBe(before);
    expect(readdirSync(path.join(storage.dir, 'tmp'))).toEqual([]);
  });

  it('removes stale PENDING uploads, orphan bytes and a deleted subject’s bytes; keeps the rest', async () => {
    const toolId = await makeTool(t, acme.key);
    const kept = (await uploadFile(t, acme.key, asset(), { name: 'k.txt', bytes: Buffer.from('keep me') })).json();
    const doomed = (
      await uploadFile(
        t,
        acme.key,
        { subjectType: 'tool', subjectId: toolId },
        { name: 'd.txt', bytes: Buffer.from('doomed bytes') },
      )
    ).json();
    const pending = (
      await t.api.post('/api/v1/attachments/uploads', acme.key, {
        ...asset(),
        filename: 'p.txt',
        contentType: 'text/plain',
        size: 5,
      })
    ).json();
    await t.db.prisma.attachment.update({
      where: { id: pending.attachmentId },
      data: { createdAt: new Date(Date.now() - 25 * 3600_000) },
    });
    await t.db.prisma.tool.delete({ where: { id: toolId } });
    const doomedFile = path.join(storage.dir, 'objects', doomed.sha256.slice(0, 2), doomed.sha256);
    expect(readdirSync(path.dirname(doomedFile))).toContain(doomed.sha256);
    const result = await t.deps.services.attachments.sweep(new Date(Date.now() + 2 * 24 * 3600_000));
    expect(result.pendingRemoved).toBeGreaterThanOrEqual(1);
    expect(result.orphansRemoved).toBeGreaterThanOrEqual(1);
    expect(await t.db.prisma.attachment.findUnique({ where: { id: pending.attachmentId } })).toBeNull();
    expect(readdirSync(path.dirname(doomedFile))).not.toContain(doomed.sha256);
    const content = await t.api.get(`/api/v1/attachments/${kept.attachmentId}/content`, acme.key);
    expect(content.body).toBe('keep me');
  });
});

describe('a client that goes away mid-upload', () => {
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('leaves no row, no staging file and no error log', async () => {
    const { multipart } = await import('../../helpers/app/attachments.ts');
    const net = await import('node:net');
    const port = (t.app.server.address() as { port: number }).port;
    const before = await t.db.prisma.attachment.count();
    const { payload, headers } = multipart(asset(), { name: 'gone.txt', bytes: Buffer.alloc(150_000, 'g') });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /api/v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acme.key}\r\n` +
        `Content-Type: ${headers['content-type']}\r\nContent-Length: ${payload.length}\r\n\r\n`,
    );
    socket.write(payload.subarray(0, 90_000));
    // Wait until the server has started staging the file, then hang up.
    for (let i = 0; i < 200 && readdirSync(path.join(storage.dir, 'tmp')).length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(readdirSync(path.join(storage.dir, 'tmp')), 'the upload reached storage').toHaveLength(1);
    socket.destroy();
    for (let i = 0; i < 200 && readdirSync(path.join(storage.dir, 'tmp')).length > 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(readdirSync(path.join(storage.dir, 'tmp'))).toEqual([]);
    expect(await t.db.prisma.attachment.count()).toBe(before);
    expect(t.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  it('answers a refused upload before the client finished sending, closing the connection', async () => {
    const { multipart } = await import('../../helpers/app/attachments.ts');
    const net = await import('node:net');
    const port = (t.app.server.address() as { port: number }).port;
    const { payload, headers } = multipart(asset(), { name: 'big.txt', bytes: Buffer.alloc(4_000_000, 'b') });
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.write(
      `POST /api/v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acme.key}\r\n` +
        `Content-Type: ${headers['content-type']}\r\nContent-Length: ${payload.length}\r\n\r\n`,
    );
    // Past the limit, but far from the end: the rest is never sent, so the body can never be complete.
    socket.write(payload.subarray(0, 400_000));
    // Kept alive, the connection would wait for the rest for good; the server answers and closes it.
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('"error":"file_too_large"');
  });
});
