import { readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { multipart, tempAttachmentsDir } from '../../helpers/app/attachments.ts';

let t: TestApp;
let acme: TestTenant;
let assetId: string;
let port: number;
const storage = tempAttachmentsDir();
const staging = () => readdirSync(path.join(storage.dir, 'tmp'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  t = await createTestApp({
    ATTACHMENTS_DIR: storage.dir,
    ATTACHMENT_MAX_BYTES: String(1_000_000),
    REQUEST_TIMEOUT_MS: '1500',
  });
  acme = await t.tenant('Acme');
  assetId = await makeAsset(t, acme.key);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await t.close();
  storage.remove();
});

/**
 * Sends the head and the first `sent` bytes of `body`, then a byte now and then, until the server answers and
 * closes the connection; the answer's status line.
 */
async function trickle(head: string, body: Buffer, sent: number): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let answer = '';
  let closed = false;
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const done = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  socket.write(head);
  socket.write(body.subarray(0, sent));
  for (let at = sent; !closed && at < body.length - 1; at++) {
    if (answer) break;
    socket.write(body.subarray(at, at + 1));
    await sleep(50);
  }
  await Promise.race([done, sleep(5000)]);
  socket.destroy();
  return answer.split('\r\n')[0];
}

/** Waits (bounded) for the staging area to be empty again. */
async function stagingEmptied() {
  for (let i = 0; i < 300 && staging().length > 0; i++) await sleep(10);
  return staging();
}

describe('an upload past the request deadline', () => {
  it('multipart: answered 503, its staging file removed, no row', async () => {
    const rows = await t.db.prisma.attachment.count();
    const { payload, headers } = multipart(
      { subjectType: 'asset', subjectId: assetId },
      { name: 'slow.txt', bytes: Buffer.alloc(500_000, 's') },
    );
    const status = await trickle(
      `POST /api/v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acme.key}\r\n` +
        `Content-Type: ${headers['content-type']}\r\nContent-Length: ${payload.length}\r\n\r\n`,
      payload,
      300_000,
    );
    expect(status).toContain('503');
    expect(await stagingEmptied()).toEqual([]);
    expect(await t.db.prisma.attachment.count()).toBe(rows);
    expect(t.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  it('presigned PUT: answered 503, its staging file removed, and the same URL then succeeds', async () => {
    const bytes = Buffer.alloc(500_000, 'p');
    const created = await t.api.post('/api/v1/attachments/uploads', acme.key, {
      subjectType: 'asset',
      subjectId: assetId,
      filename: 'slow.txt',
      contentType: 'text/plain',
      size: bytes.length,
    });
    expect(created.statusCode, created.body).toBe(201);
    const { attachmentId, upload } = created.json();
    const url = new URL(upload.url).pathname;
    const status = await trickle(
      `PUT ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      bytes,
      300_000,
    );
    expect(status).toContain('503');
    expect(await stagingEmptied()).toEqual([]);
    for (let i = 0; i < 300; i++) {
      const row = await t.db.prisma.attachment.findUnique({ where: { id: attachmentId } });
      if (!row?.uploadClaimedAt) break;
      await sleep(10);
    }
    expect(t.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
    const retry = await t.app.inject({ method: 'PUT', url, headers: upload.headers, payload: bytes });
    expect(retry.statusCode, retry.body).toBe(200);
    const done = await t.api.post(`/api/v1/attachments/${attachmentId}/complete`, acme.key);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().attachment).toMatchObject({ status: 'READY', size: bytes.length });
  });
});

describe('the claim of a presigned PUT', () => {
  it('is free again once older than the request deadline (a request cut off without releasing it)', async () => {
    const bytes = Buffer.from('claimed once');
    const created = await t.api.post('/api/v1/attachments/uploads', acme.key, {
      subjectType: 'asset',
      subjectId: assetId,
      filename: 'c.txt',
      contentType: 'text/plain',
      size: bytes.length,
    });
    const { attachmentId, upload } = created.json();
    const url = new URL(upload.url).pathname;
    const claim = (at: Date) =>
      t.db.prisma.attachment.update({ where: { id: attachmentId }, data: { uploadClaimedAt: at } });
    await claim(new Date());
    const busy = await t.app.inject({ method: 'PUT', url, headers: upload.headers, payload: bytes });
    expect(busy.statusCode).toBe(409);
    await claim(new Date(Date.now() - 60_000));
    const put = await t.app.inject({ method: 'PUT', url, headers: upload.headers, payload: bytes });
    expect(put.statusCode, put.body).toBe(200);
  });
});
