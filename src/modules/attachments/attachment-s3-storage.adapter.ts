import { Readable } from 'node:stream';
import { lazyModule } from '../../core/lazy-module.ts';
import type { Config } from '../../config.ts';
import type { AttachmentStorage, StagedObject } from './attachment-storage-interface.adapter.ts';
import { createPartPool, uploadStream } from './attachment-s3-upload.adapter.ts';

// The AWS SDK is loaded when S3 storage is configured, not by every server (docs/adr/0010-lazy-start-up.md).
const clientS3 = lazyModule<typeof import('@aws-sdk/client-s3')>('@aws-sdk/client-s3');
const presigner = lazyModule<typeof import('@aws-sdk/s3-request-presigner')>('@aws-sdk/s3-request-presigner');

const missing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/**
 * Objects in an S3-compatible bucket, keyed <prefix><attachment id>, thumbnails beside as <key>.thumb.webp. A
 * presigned PUT writes <prefix>incoming/<attachment id> (its URL outlives complete, so it must not name the key
 * served): complete copies the verified bytes from there. Streams go up in parts from one pool of part buffers per
 * process (attachment-s3-upload.adapter.ts: memory bounded however many uploads run); checksums only when
 * required, as s3rver and other S3-compatible servers store the aws-chunked framing of a streamed PutObject
 * otherwise. Every call has connection and request timeouts, so a dead bucket fails fast instead of hanging.
 */
export function createS3Storage(s3: Config['attachments']['s3']): AttachmentStorage {
  const sdk = clientS3();
  const {
    CopyObjectCommand,
    CreateBucketCommand,
    DeleteObjectCommand,
    GetObjectCommand,
    HeadBucketCommand,
    HeadObjectCommand,
    ListObjectsV2Command,
    PutObjectCommand,
    S3Client,
  } = sdk;
  const { getSignedUrl } = presigner();
  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: s3.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    // The SDK's Node.js handler, configured: connect and socket-inactivity timeouts that fail the call.
    requestHandler: { connectionTimeout: s3.timeoutMs, requestTimeout: s3.timeoutMs, throwOnRequestTimeout: true },
  });
  const Bucket = s3.bucket;
  const { partBytes, queueSize, bufferBytes, waitMs } = s3.upload;
  const pool = createPartPool(partBytes, Math.max(1, Math.floor(bufferBytes / partBytes)), waitMs);
  // Before the first write: a bucket that does not exist is created when the credentials may (a fresh MinIO or
  // s3rver); a failure to reach the bucket is not remembered, so the next write asks again.
  let bucketReady: Promise<void> | null = null;
  const ensureBucket = () =>
    (bucketReady ??= (async () => {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
      } catch (err) {
        if (!missing(err)) throw err;
        await client.send(new CreateBucketCommand({ Bucket })).catch((e: { name?: string }) => {
          if (e.name !== 'BucketAlreadyOwnedByYou' && e.name !== 'BucketAlreadyExists') throw e;
        });
      }
    })().catch((err) => {
      bucketReady = null;
      throw err;
    }));
  const remove = async (Key: string) => {
    await client.send(new DeleteObjectCommand({ Bucket, Key }));
  };

  return {
    kind: 's3',
    sharedKeys: false,
    keyFor: (id) => `${s3.prefix}${id}`,
    stagingKeyFor: (id) => `${s3.prefix}incoming/${id}`,
    thumbnailKey: (key) => `${key}.thumb.webp`,

    async stage(source, id): Promise<StagedObject> {
      const Key = `${s3.prefix}${id}`;
      await ensureBucket();
      await uploadStream(
        sdk,
        client,
        { Bucket, Key, ContentType: 'application/octet-stream' },
        source,
        pool,
        queueSize,
      );
      return {
        // A completed upload is already durable in the bucket.
        persist: () => Promise.resolve(),
        commit: async (key) => {
          if (key !== Key) throw new Error(`bucket objects are keyed by attachment id: ${key} is not ${Key}`);
        },
        discard: () => remove(Key),
      };
    },

    async read(Key, range) {
      const out = await client.send(
        new GetObjectCommand({ Bucket, Key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return out.Body as Readable;
    },

    async size(Key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key }));
        return head.ContentLength ?? 0;
      } catch (err) {
        if (missing(err)) return null;
        throw err;
      }
    },

    async put(Key, Body, ContentType) {
      await ensureBucket();
      await client.send(new PutObjectCommand({ Bucket, Key, Body, ContentType }));
    },

    remove,

    async copy(from, Key) {
      await client.send(new CopyObjectCommand({ Bucket, Key, CopySource: encodeURI(`${Bucket}/${from}`) }));
    },

    async *list() {
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: s3.prefix, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key) yield { key: o.Key, modifiedAt: o.LastModified ?? new Date(0) };
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },

    async presignPut(Key, ContentType, ContentLength, expiresIn) {
      await ensureBucket();
      const url = await getSignedUrl(client, new PutObjectCommand({ Bucket, Key, ContentType, ContentLength }), {
        expiresIn,
      });
      return { url, headers: { 'Content-Type': ContentType } };
    },

    async close() {
      client.destroy();
    },
  };
}

export { missing as isMissingObject };
