import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether an enabled AsyncLocalStorage costs every promise of the process: true before Node.js 24, whose storages
 * switch on async hooks; from 24 on they carry their context in V8's continuation data (AsyncContextFrame) and an
 * enabled one costs nothing when unused, so the storage below stays enabled (docs/adr/0033-runtime-version-gates.md).
 */
export const lazyTracking = Number(process.versions.node.split('.')[0]) < 24;

/**
 * An AsyncLocalStorage that is enabled only while work runs in it, and for `idleMs` after.
 *
 * Before Node 24 an enabled AsyncLocalStorage switches on async hooks for the whole process: every promise, tick
 * and socket write of every request, whatever it does, then pays for context tracking
 * (docs/adr/0010-lazy-start-up.md). The contexts built on this (a write request's deadline scope, an idempotent
 * request's transaction) are needed only while such work is in flight, so between them, and in a process serving
 * reads, no request pays for them. Work started in a context but not awaited by it (fire and forget) keeps the
 * context only while the storage stays enabled; nothing here relies on such work seeing it.
 */
export function createLazyContext<T>(idleMs = 1_000) {
  const storage = new AsyncLocalStorage<T>();
  if (!lazyTracking) {
    return {
      run: <R>(store: T, fn: () => R): R => storage.run(store, fn),
      current: (): T | undefined => storage.getStore(),
      tracking: () => true,
      exit: <R>(fn: () => R): R => (storage.getStore() === undefined ? fn() : storage.exit(fn)),
    };
  }
  let tracking = false;
  let users = 0;
  let lastRelease = 0;
  let timer: NodeJS.Timeout | null = null;

  const disableWhenIdle = () => {
    timer = null;
    if (users > 0) return;
    const wait = lastRelease + idleMs - performance.now();
    if (wait > 0) {
      timer = setTimeout(disableWhenIdle, wait);
      timer.unref();
      return;
    }
    storage.disable();
    tracking = false;
  };

  const release = () => {
    users -= 1;
    if (users > 0) return;
    lastRelease = performance.now();
    if (!timer) {
      timer = setTimeout(disableWhenIdle, idleMs);
      timer.unref();
    }
  };

  return {
    /** Runs fn with `store` as the context of everything it starts; counted in use until fn's promise settles. */
    run<R>(store: T, fn: () => R): R {
      users += 1;
      tracking = true;
      let result: R;
      try {
        result = storage.run(store, fn);
      } catch (err) {
        release();
        throw err;
      }
      // A thenable (a promise, or Fastify's reply) holds the context until it settles.
      const then = (result as { then?: unknown } | null | undefined)?.then;
      if (typeof then === 'function') then.call(result, release, release);
      else release();
      return result;
    },
    current: (): T | undefined => storage.getStore(),
    /** Whether async context is being tracked for this storage now (for tests and diagnostics). */
    tracking: () => tracking,
    /** fn outside any context of this storage. */
    exit<R>(fn: () => R): R {
      return storage.getStore() === undefined ? fn() : storage.exit(fn);
    },
  };
}
