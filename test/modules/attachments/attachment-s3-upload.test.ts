import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipart } from '../../helpers/app/attachments.ts';
import { startS3App, type S3App } from '../../helpers/app/s3rver.ts';
import type { Res } from '../../helpers/app/test-app.ts';
import { createPartPool, uploadStream } from '../../../src/modules/attachments/attachment-s3-upload.adapter.ts';

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A client that answers every command after `delayMs`, counting the part bodies it holds at once. */
function fakeBucket(delayMs: number) {
  const stored = new Map<string, Buffer[]>();
  const state = { holding: 0, most: 0, parts: 0 };
  const command = (name: string) =>
    class {
      constructor(readonly input: Record<string, any>) {}
      readonly name = name;
    };
  const sdk = {
    PutObjectCommand: command('put'),
    CreateMultipartUploadCommand: command('create'),
    UploadPartCommand: command('part'),
    CompleteMultipartUploadCommand: command('complete'),
    AbortMultipartUploadCommand: command('abort'),
  };
  const client = {
    async send(cmd: { name: string; input: Record<string, any> }) {
      const { Key, Body } = cmd.input;
      if (cmd.name === 'create') return { UploadId: `u-${Key}` };
      if (cmd.name === 'part' || cmd.name === 'put') {
        // A copy: the buffer goes back to the pool once the call returns.
        const copy = Buffer.from(Body as Buffer);
        state.holding++;
        state.most = Math.max(state.most, state.holding);
        await new Promise((r) => setTimeout(r, delayMs));
        state.holding--;
        state.parts++;
        stored.set(Key, [...(stored.get(Key) ?? []), copy]);
        return { ETag: `"${state.parts}"` };
      }
      return {};
    },
  };
  return { sdk: sdk as any, client: client as any, stored, state };
}

/** `bytes` as a stream of 64 KiB chunks, as a request body arrives. */
const chunked = (bytes: Buffer) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += 64 * 1024) yield bytes.subarray(i, i + 64 * 1024);
    })(),
  );

describe('streamed uploads to a bucket', () => {
  it('holds at most the pool’s part buffers however many uploads run, and stores every byte in order', async () => {
    const bucket = fakeBucket(20);
    const pool = createPartPool(1 * MiB, 3, 10_000);
    const files = Array.from({ length: 6 }, (_, i) => Buffer.alloc(3 * MiB + 1000 * i, i + 1));
    await Promise.all(
      files.map((bytes, i) =>
        uploadStream(
          bucket.sdk,
          bucket.client,
          { Bucket: 'b', Key: `k${i}`, ContentType: 'x' },
          chunked(bytes),
          pool,
          2,
        ),
      ),
    );
    expect(bucket.state.most).toBe(3);
    expect(pool.inUse()).toBe(0);
    files.forEach((bytes, i) => expect(sha(Buffer.concat(bucket.stored.get(`k${i}`)!))).toBe(sha(bytes)));
  });

  it('refuses with 503 storage_unavailable when no part buffer frees up within the wait', async () => {
    const bucket = fakeBucket(400);
    const pool = createPartPool(1 * MiB, 1, 50);
    const target = (Key: string) => ({ Bucket: 'b', Key, ContentType: 'x' });
    const first = uploadStream(bucket.sdk, bucket.client, target('a'), chunked(Buffer.alloc(MiB / 2)), pool, 2);
    await expect(
      uploadStream(bucket.sdk, bucket.client, target('b'), chunked(Buffer.alloc(MiB / 2)), pool, 2),
    ).rejects.toMatchObject({ statusCode: 503, code: 'storage_unavailable', message: expect.stringMatching(/busy/) });
    await first;
    expect(pool.inUse()).toBe(0);
  });
});

describe('uploads on s3rver with a process-wide part budget', () => {
  let s3: S3App;
  beforeAll(async () => {
    // One 5 MiB part for the whole process, and a short wait for it.
    s3 = await startS3App('fleet-budget', { env: { S3_UPLOAD_BUFFER_MIB: '5', S3_UPLOAD_WAIT_MS: '300' } });
  });
  afterAll(() => s3.close());

  it('makes a second upload wait for the part buffer, then answers 503 in the API envelope', async () => {
    const { t, acme, assetId } = s3;
    // The first upload's body arrives in two halves: its part buffer stays taken until the second comes.
    const { payload, headers } = multipart(
      { subjectType: 'asset', subjectId: assetId },
      { name: 'a.pdf', bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2 * MiB, 1)]) },
    );
    let sendRest!: () => void;
    const rest = new Promise<void>((r) => (sendRest = r));
    const half = Math.floor(payload.length / 2);
    const slow = Readable.from(
      (async function* () {
        yield payload.subarray(0, half);
        await rest;
        yield payload.subarray(half);
      })(),
    );
    const post = (body: unknown, extra: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/attachments',
        headers: { authorization: `Bearer ${acme.key}`, ...extra },
        payload: body as any,
      }) as Promise<Res>;
    const first = post(slow, { ...headers, 'content-length': String(payload.length) });
    await new Promise((r) => setTimeout(r, 200));
    const second = multipart(
      { subjectType: 'asset', subjectId: assetId },
      { name: 'b.pdf', bytes: Buffer.from('%PDF-1.4\nx') },
    );
    const busy = await post(second.payload, second.headers);
    expect(busy.statusCode, busy.body).toBe(503);
    expect(busy.json()).toEqual({ ok: false, error: 'storage_unavailable', message: expect.stringMatching(/busy/) });
    sendRest();
    expect((await first).statusCode).toBe(201);
    // Once the buffer is free, the next upload proceeds.
    expect((await post(second.payload, second.headers)).statusCode).toBe(201);
  });
});
