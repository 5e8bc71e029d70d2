// Streams into a bucket with bounded memory: parts of a fixed size, at most `queueSize` of them in flight per upload,
// and every part buffer taken from one pool per process, so N concurrent uploads cannot multiply the memory.
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { ApiError } from '../../core/errors.ts';

type S3 = typeof import('@aws-sdk/client-s3');

/**
 * Part buffers of `partBytes` each, at most `count` in the process; taken in arrival order, each wait bounded by
 * `waitMs` (then 503 `storage_unavailable`, saying it is busy). Freed buffers are kept while someone uses the pool
 * and dropped once it is idle, so an idle process holds none of them.
 */
export function createPartPool(partBytes: number, count: number, waitMs: number) {
  let lent = 0;
  const free: Buffer[] = [];
  const waiting: { grant: (b: Buffer) => void }[] = [];

  function give(buffer: Buffer) {
    const next = waiting.shift();
    if (next) return next.grant(buffer);
    lent--;
    if (lent > 0) free.push(buffer);
    else free.length = 0;
  }

  return {
    partBytes,
    /** A buffer and its return; rejects with 503 storage_unavailable after waitMs without one. */
    take(): Promise<{ buffer: Buffer; release: () => void }> {
      const lease = (buffer: Buffer) => {
        let returned = false;
        return {
          buffer,
          release: () => {
            if (returned) return;
            returned = true;
            give(buffer);
          },
        };
      };
      if (lent < count) {
        lent++;
        return Promise.resolve(lease(free.pop() ?? Buffer.allocUnsafeSlow(partBytes)));
      }
      return new Promise((resolve, reject) => {
        const entry = {
          grant: (b: Buffer) => {
            clearTimeout(timer);
            resolve(lease(b));
          },
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(entry), 1);
          reject(new ApiError(503, 'storage_unavailable', 'Attachment storage is busy with other uploads; try again'));
        }, waitMs);
        waiting.push(entry);
      });
    },
    /** Buffers lent out now (tests and metrics). */
    inUse: () => lent,
  };
}

export type PartPool = ReturnType<typeof createPartPool>;

/** Fills `buffer` from the source; the bytes read and whether the source has ended. */
async function fill(source: AsyncIterator<Buffer>, buffer: Buffer, carry: { rest: Buffer | null }) {
  let length = 0;
  for (;;) {
    let chunk = carry.rest;
    carry.rest = null;
    if (!chunk) {
      const next = await source.next();
      if (next.done) return { length, ended: true };
      chunk = next.value;
    }
    const take = Math.min(chunk.length, buffer.length - length);
    chunk.copy(buffer, length, 0, take);
    length += take;
    if (take < chunk.length) carry.rest = chunk.subarray(take);
    if (length === buffer.length) return { length, ended: false };
  }
}

/**
 * Writes `source` to `Key`: one PutObject when it fits in one part, else a multipart upload with at most
 * `queueSize` parts in flight (aborted on any failure). The source's own error is the one thrown.
 */
export async function uploadStream(
  s3: Pick<S3, 'PutObjectCommand' | 'CreateMultipartUploadCommand' | 'UploadPartCommand'> &
    Pick<S3, 'CompleteMultipartUploadCommand' | 'AbortMultipartUploadCommand'>,
  client: S3Client,
  target: { Bucket: string; Key: string; ContentType: string },
  source: Readable,
  pool: PartPool,
  queueSize: number,
): Promise<void> {
  const { Bucket, Key } = target;
  const reader = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const carry = { rest: null as Buffer | null };
  let uploadId: string | undefined;
  const parts: { PartNumber: number; ETag?: string }[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  try {
    for (let partNumber = 1; ; partNumber++) {
      const { buffer, release } = await pool.take();
      let read;
      try {
        read = await fill(reader, buffer, carry);
      } catch (err) {
        release();
        throw err;
      }
      const body = buffer.subarray(0, read.length);
      if (partNumber === 1 && read.ended) {
        try {
          await client.send(new s3.PutObjectCommand({ ...target, Body: body, ContentLength: body.length }));
        } finally {
          release();
        }
        return;
      }
      if (read.length === 0) {
        release();
        break;
      }
      uploadId ??= (await client.send(new s3.CreateMultipartUploadCommand(target))).UploadId;
      const sent = client
        .send(new s3.UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber: partNumber, Body: body }))
        .then((out) => void parts.push({ PartNumber: partNumber, ETag: out.ETag }))
        .catch((err: unknown) => void (failure ??= err))
        .finally(() => {
          release();
          inFlight.delete(sent);
        });
      inFlight.add(sent);
      if (inFlight.size >= queueSize) await Promise.race(inFlight);
      if (failure) throw failure;
      if (read.ended) break;
    }
    await Promise.all(inFlight);
    if (failure) throw failure;
    parts.sort((a, b) => a.PartNumber - b.PartNumber);
    await client.send(
      new s3.CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
    );
  } catch (err) {
    await Promise.all(inFlight);
    if (uploadId)
      await client.send(new s3.AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => undefined);
    throw err;
  }
}
