import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

export interface TestBucket {
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A real S3-compatible server (s3rver) on a random port over a temporary directory, with one bucket (unless
 * `createBucket` is false: the service then creates it); `env` is what
 * the app needs to use it. The SDK takes credentials from the standard chain, so they are set in the environment.
 */
export async function startS3rver(bucket = 'fleet-attachments', createBucket = true): Promise<TestBucket> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-s3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: createBucket ? [{ name: bucket }] : [],
  });
  const { port } = (await server.run()) as { port: number };
  process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
  return {
    env: {
      ATTACHMENTS_STORAGE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_FORCE_PATH_STYLE: 'true',
      S3_REGION: 'us-east-1',
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
