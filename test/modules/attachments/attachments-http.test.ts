import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { tempAttachmentsDir } from '../../helpers/app/attachments.ts';

/** The multipart upload's documented rules over a real socket: what a client's timing must not change. */
let t: TestApp;
let acme: TestTenant;
let assetId: string;
let port: number;
const storage = tempAttachmentsDir();

beforeAll(async () => {
  t = await createTestApp({ ATTACHMENTS_DIR: storage.dir, ATTACHMENT_MAX_BYTES: String(1_000_000) });
  acme = await t.tenant('Acme');
  assetId = await makeAsset(t, acme.key);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await t.close();
  storage.remove();
});

/** A multipart body with its parts in the given order. */
function body(parts: ({ field: string; value: string } | { file: string; bytes: Buffer })[]) {
  const boundary = `----order${Math.random().toString(16).slice(2)}`;
  const chunks = parts.map((p) =>
    'field' in p
      ? Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"\r\n\r\n${p.value}\r\n`)
      : Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${p.file}"\r\n` +
              'Content-Type: text/plain\r\n\r\n',
          ),
          p.bytes,
          Buffer.from('\r\n'),
        ]),
  );
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

/** Writes the whole request at once on a kept-alive connection; the raw answer, and whether the server closed. */
async function sendAtOnce(payload: Buffer, type: string, connection = 'keep-alive') {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let answer = '';
  let closed = false;
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.on('close', () => ((closed = true), resolve())));
  socket.write(
    Buffer.concat([
      Buffer.from(
        `POST /api/v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: ${connection}\r\n` +
          `Authorization: Bearer ${acme.key}\r\nContent-Type: ${type}\r\nContent-Length: ${payload.length}\r\n\r\n`,
      ),
      payload,
    ]),
  );
  await Promise.race([ended, new Promise((r) => setTimeout(r, 3_000))]);
  socket.destroy();
  return { answer, closed };
}

describe('multipart uploads over HTTP', () => {
  it('answers 413 with Connection: close and closes, even when the whole body had arrived', async () => {
    const { payload, type } = body([
      { field: 'subjectType', value: 'asset' },
      { field: 'subjectId', value: assetId },
      { file: 'big.txt', bytes: Buffer.alloc(1_000_010, 'b') },
    ]);
    const { answer, closed } = await sendAtOnce(payload, type);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('"error":"file_too_large"');
    expect(closed).toBe(true);
  });

  it('refuses form fields after the file with 422, however small the body', async () => {
    const before = await t.db.prisma.attachment.count();
    const { payload, type } = body([
      { file: 'first.txt', bytes: Buffer.from('file first') },
      { field: 'subjectType', value: 'asset' },
      { field: 'subjectId', value: assetId },
    ]);
    const { answer } = await sendAtOnce(payload, type);
    expect(answer).toMatch(/^HTTP\/1\.1 422/);
    const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(json).toMatchObject({
      ok: false,
      error: 'validation_failed',
      fieldErrors: {
        subjectType: 'is required, as a form field before the file part',
        subjectId: 'is required, as a form field before the file part',
      },
    });
    expect(await t.db.prisma.attachment.count()).toBe(before);
  });

  it('accepts the same parts with the fields first', async () => {
    const { payload, type } = body([
      { field: 'subjectType', value: 'asset' },
      { field: 'subjectId', value: assetId },
      { file: 'first.txt', bytes: Buffer.from('fields first') },
    ]);
    expect((await sendAtOnce(payload, type, 'close')).answer).toMatch(/^HTTP\/1\.1 201/);
  });
});
