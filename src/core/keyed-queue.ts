/**
 * Runs tasks one at a time per key, in arrival order. A key's entry exists only while it has tasks, so
 * the map stays as small as the number of keys busy right now. A failing task does not stop the next.
 */
export interface KeyedQueue {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Keys with a task running or waiting (for tests and metrics). */
  size(): number;
}

export function createKeyedQueue(): KeyedQueue {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task, task);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    size: () => tails.size,
  };
}
