import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A dependency loaded the first time it is used rather than when the server starts: for packages that the first
 * healthy answer does not need and that cost start-up time to load (measured in the README, "Memory and
 * start-up"). Only CommonJS packages (require), so loading stays synchronous where it is first needed.
 */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireHere(name) as T);
}
