import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A dependency loaded the first time it is used rather than when the server starts: for packages that the first
 * healthy answer does not need and that cost start-up time to load (docs/adr/0010-lazy-start-up.md). Only
 * CommonJS packages (require), so loading stays synchronous where it is first needed.
 */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireHere(name) as T);
}
