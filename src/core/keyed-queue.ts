/**
 * Runs at most `perKey` tasks at a time per key; the rest wait in arrival order. A key's entry exists only
 * while it has tasks, so the map stays as small as the number of keys busy right now. A failing task does
 * not stop the next.
 */
export interface KeyedQueue {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Keys with a task running or waiting (for tests and metrics). */
  size(): number;
}

interface KeyState {
  running: number;
  waiting: (() => void)[];
}

export function createKeyedQueue(perKey = 1): KeyedQueue {
  const keys = new Map<string, KeyState>();
  const release = (key: string, state: KeyState) => {
    const next = state.waiting.shift();
    if (next) next();
    else if (--state.running === 0) keys.delete(key);
  };
  return {
    async run<T>(key: string, task: () => Promise<T>): Promise<T> {
      let state = keys.get(key);
      if (!state) keys.set(key, (state = { running: 0, waiting: [] }));
      // A finishing task hands its slot straight to the first waiter, so `running` counts slots, not tasks.
      if (state.running < perKey) state.running += 1;
      else await new Promise<void>((resolve) => state.waiting.push(resolve));
      try {
        return await task();
      } finally {
        release(key, state);
      }
    },
    size: () => keys.size,
  };
}
