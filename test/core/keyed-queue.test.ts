import { describe, expect, it } from 'vitest';
import { createKeyedQueue } from '../../src/core/keyed-queue.ts';

const deferred = () => {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};
const tick = () => new Promise((r) => setImmediate(r));

describe('createKeyedQueue', () => {
  it('runs the tasks of one key one at a time, in arrival order', async () => {
    const queue = createKeyedQueue();
    const log: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, i) =>
      queue.run('org-a', async () => {
        log.push(`start ${i}`);
        await gate.promise;
        log.push(`end ${i}`);
        return i;
      }),
    );
    await tick();
    expect(log).toEqual(['start 0']);
    gates[2].resolve(); // finishing out of order changes nothing: 2 has not started
    gates[1].resolve();
    await tick();
    expect(log).toEqual(['start 0']);
    gates[0].resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('runs different keys side by side', async () => {
    const queue = createKeyedQueue();
    const gate = deferred();
    const blocked = queue.run('org-a', () => gate.promise);
    expect(await queue.run('org-b', async () => 'b')).toBe('b');
    await tick();
    expect(queue.size()).toBe(1); // org-a, still busy
    gate.resolve();
    await blocked;
  });

  it('a failing task rejects its own caller only; the next runs, and idle keys are forgotten', async () => {
    const queue = createKeyedQueue();
    const failed = queue.run('org-a', async () => {
      throw new Error('statement failed');
    });
    const next = queue.run('org-a', async () => 'next');
    await expect(failed).rejects.toThrow('statement failed');
    expect(await next).toBe('next');
    await tick();
    expect(queue.size()).toBe(0);
  });

  it('with two slots per key, the third task waits for the first to finish', async () => {
    const queue = createKeyedQueue(2);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, i) =>
      queue.run('org-a', async () => {
        started.push(i);
        await gate.promise;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    gates[1].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates[0].resolve();
    gates[2].resolve();
    await Promise.all(runs);
    expect(queue.size()).toBe(0);
  });
});
