import type { FastifyBaseLogger } from 'fastify';
import { runHooks } from '../db/transaction.ts';

/**
 * Fire-and-forget side work (billing sync, notifications, anomaly checks): never awaited by the request
 * that caused it, failures logged with context. Pending work is tracked so shutdown and tests can wait.
 */
export function createBackground(log: FastifyBaseLogger) {
  const pending = new Set<Promise<void>>();
  function run(name: string, context: Record<string, unknown>, work: () => Promise<unknown>): void {
    // Side work of a change made inside a request's transaction (an idempotent request) starts once it
    // commits; a rollback drops it, as it would have for a change in its own transaction.
    runHooks([() => start(name, context, work)]);
  }
  function start(name: string, context: Record<string, unknown>, work: () => Promise<unknown>): void {
    const task = Promise.resolve()
      .then(work)
      .then(
        () => undefined,
        (err: unknown) => log.error({ err, task: name, ...context }, 'background task failed'),
      )
      .finally(() => pending.delete(task));
    pending.add(task);
  }
  return {
    run,
    /** Resolves when every task started so far (and those they start) has settled. */
    async idle(): Promise<void> {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    get size() {
      return pending.size;
    },
  };
}

export type Background = ReturnType<typeof createBackground>;
