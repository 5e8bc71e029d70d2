import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

/**
 * The reference's browser bundle: Scalar's standalone build from the `@scalar/api-reference` npm package, served
 * by the service itself so /docs works with no internet. The package is a development dependency (installed it
 * brings a Vue toolchain the server never runs); `npm run build` copies the one self-contained file (and
 * its licence) next to the compiled module, which is what the image ships. From the sources (tests, `npm run
 * dev`) it is read straight from node_modules.
 */
const PACKAGE_FILE = '@scalar/api-reference/browser/standalone.js';

export interface StaticAsset {
  /** First 16 hex digits of the SHA-256 of the content: part of the URL, so it can be cached forever. */
  hash: string;
  raw: Buffer;
  gzipped: Buffer;
}

export function scalarBundlePath(): string {
  // scripts/build.mjs puts it here (dist/site/vendor/), which runtime-files.txt ships as part of dist.
  const built = fileURLToPath(new URL('./vendor/scalar-api-reference.js', import.meta.url));
  if (existsSync(built)) return built;
  try {
    return createRequire(import.meta.url).resolve(PACKAGE_FILE);
  } catch {
    throw new Error(`the API reference bundle is missing: neither ${built} nor ${PACKAGE_FILE} exists`);
  }
}

/** Hashes and compresses once (off the event loop: zlib runs on the thread pool); a failure is not cached. */
export function lazyAsset(load: () => Promise<Buffer | string>): () => Promise<StaticAsset> {
  let pending: Promise<StaticAsset> | undefined;
  return () =>
    (pending ??= (async () => {
      const content = await load();
      const raw = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
      const gzipped = await promisify(gzip)(raw, { level: 9 });
      return { hash: createHash('sha256').update(raw).digest('hex').slice(0, 16), raw, gzipped };
    })().catch((err: unknown) => {
      pending = undefined;
      throw err;
    }));
}

export const scalarBundle = lazyAsset(() => readFile(scalarBundlePath()));

/** True when the client accepts gzip (any q > 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';');
    if (coding.trim().toLowerCase() !== 'gzip' && coding.trim() !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
