import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeAsset } from './factories.ts';
import type { TestTenant } from './tenants.ts';
import { createTestApp, type TestApp } from './test-app.ts';
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

/** A test app on a bucket of its own, with a tenant and one of its assets; `keys()` lists the bucket's objects. */
export interface S3App {
  t: TestApp;
  bucket: TestBucket;
  acme: TestTenant;
  assetId: string;
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startS3App(
  bucketName: string,
  options: { createBucket?: boolean; env?: Record<string, string> } = {},
): Promise<S3App> {
  const bucket = await startS3rver(bucketName, options.createBucket ?? true);
  const t = await createTestApp({ ...bucket.env, ...options.env });
  const acme = await t.tenant('Acme');
  return {
    t,
    bucket,
    acme,
    assetId: await makeAsset(t, acme.key),
    async keys() {
      const out: string[] = [];
      for await (const { key } of t.deps.services.attachments.storage.list()) out.push(key);
      return out;
    },
    async close() {
      await t.close();
      await bucket.close();
    },
  };
}

/**
 * Runs `fn` on an app whose bucket endpoint accepts connections and never answers (S3_TIMEOUT_MS 300), with a
 * tenant and one of its assets; the app and the listener are closed afterwards.
 */
export async function withSilentBucket(
  bucketEnv: Record<string, string>,
  fn: (dead: TestApp, tenant: TestTenant, assetId: string) => Promise<void>,
): Promise<void> {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as net.AddressInfo).port;
  const dead = await createTestApp({ ...bucketEnv, S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_TIMEOUT_MS: '300' });
  try {
    const tenant = await dead.tenant('Dead');
    await fn(dead, tenant, await makeAsset(dead, tenant.key));
  } finally {
    await dead.close();
    silent.close();
  }
}
