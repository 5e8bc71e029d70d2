import { createHook } from 'node:async_hooks';

/**
 * Keeps one entry of Node's process.nextTick queue alive for the life of the process, so that every later entry
 * is built the fast way.
 *
 * process.nextTick builds each entry as `{ [async_id_symbol]: id, [trigger_async_id_symbol]: trigger, callback,
 * args }`. V8 caches how to define each of those properties on the object's hidden class, and for a literal with
 * computed keys that cache has no polymorphic state: once it meets a second hidden class it falls back to the
 * runtime for good. The entries' hidden classes live only as long as some entry does. A full garbage collection
 * that runs while the queue is empty (common at start-up, and with HEAP_GROWTH_PERCENT's more frequent full
 * collections) frees them, the next entry gets new ones, and from then on every nextTick goes through the runtime,
 * several times per HTTP request (docs/adr/0004-nexttick-shape.md has the measurements). One entry kept alive
 * keeps its hidden classes, and the ones every later entry takes, alive.
 *
 * The entry is caught by an async hook enabled only for that one nextTick call: enabling and disabling it leaves
 * nothing behind (no init hooks, no promise hooks, no execution-resource tracking afterwards).
 *
 * From Node.js 26 on, nextTick builds its entries with a class whose constructor holds their hidden class, so the
 * megamorphic fall-back above no longer happens; a kept entry still measured cheaper there, so it is kept on every
 * line (docs/adr/0033-runtime-version-gates.md).
 */
let kept: object | undefined;

/** Whether this Node.js builds nextTick's entries as an object literal (before 26), for tests and diagnostics. */
export const tickEntriesAreLiterals = Number(process.versions.node.split('.')[0]) < 26;

export function keepTickObjectShape(): void {
  if (kept) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') kept ??= resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
}

/** The entry being kept, if any (for tests and diagnostics). */
export const keptTickObject = (): object | undefined => kept;
