import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createLazyContext, lazyTracking } from '../../src/core/lazy-context.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// In a process of its own (the test worker may have storages of its own enabled): the async id a promise reaction
// runs under, before and after one AsyncLocalStorage was used. Non-zero means promise hooks are on, so that every
// promise of the process pays for context tracking from then on.
const PROBE = `
const { AsyncLocalStorage, executionAsyncId } = require('node:async_hooks');
const reactionId = () => new Promise((resolve) => Promise.resolve().then(() => resolve(executionAsyncId())));
reactionId().then((before) => {
  new AsyncLocalStorage().run(1, () => {});
  return reactionId().then((after) => console.log(JSON.stringify({ before, after })));
});
`;

describe('whether a context needs to be tracked lazily on this Node.js', () => {
  it(`matches what an enabled AsyncLocalStorage costs here (${lazyTracking ? 'every promise' : 'nothing'})`, () => {
    const run = spawnSync(process.execPath, ['-e', PROBE], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const { before, after } = JSON.parse(run.stdout) as { before: number; after: number };
    expect(before).toBe(0);
    // Should a Node.js release before 24 stop tracking every promise, or a later one start again, this fails and
    // lazyTracking's version check must follow.
    expect(after !== 0).toBe(lazyTracking);
  });
});

describe('a context tracked only while in use', () => {
  it('is seen by everything its work starts, and by nothing else', async () => {
    const ctx = createLazyContext<string>(20);
    const seen = new Map<string, string | undefined>();
    const outside = sleep(5).then(() => seen.set('outside', ctx.current()));
    await ctx.run('a', async () => {
      seen.set('start', ctx.current());
      await sleep(1);
      seen.set('after await', ctx.current());
      await Promise.all([
        ctx.run('b', async () => {
          await sleep(2);
          seen.set('nested', ctx.current());
        }),
        sleep(3).then(() => seen.set('beside nested', ctx.current())),
      ]);
      seen.set(
        'exit',
        ctx.exit(() => ctx.current()),
      );
    });
    await outside;
    expect(Object.fromEntries(seen)).toEqual({
      start: 'a',
      'after await': 'a',
      nested: 'b',
      'beside nested': 'a',
      exit: undefined,
      outside: undefined,
    });
  });

  it.runIf(!lazyTracking)(
    'is a plain AsyncLocalStorage where tracking costs nothing unused (Node.js 24 on)',
    async () => {
      const ctx = createLazyContext<number>(10);
      expect(ctx.tracking()).toBe(true);
      expect(await ctx.run(1, async () => (await sleep(1), ctx.current()))).toBe(1);
      await sleep(50);
      expect(ctx.tracking()).toBe(true);
    },
  );

  it.runIf(lazyTracking)(
    'stops tracking once idle, starts again for the next work, and keeps it while work is in flight',
    async () => {
      const ctx = createLazyContext<number>(30);
      expect(ctx.tracking()).toBe(false);
      let release!: () => void;
      const long = ctx.run(1, () => new Promise<void>((r) => (release = r)).then(() => ctx.current()));
      await ctx.run(2, async () => sleep(1));
      await sleep(80); // past the idle time of the short run, but the long one is still in flight
      expect(ctx.tracking()).toBe(true);
      release();
      expect(await long).toBe(1);
      await sleep(80);
      expect(ctx.tracking()).toBe(false);
      expect(await ctx.run(3, async () => (await sleep(1), ctx.current()))).toBe(3);
      expect(ctx.tracking()).toBe(true);
    },
  );

  it.runIf(lazyTracking)('holds on while a thenable that is not a promise (a Fastify reply) is unsettled', async () => {
    const ctx = createLazyContext<number>(10);
    let settle!: () => void;
    const thenable = { then: (done: () => void) => (settle = done) };
    expect(ctx.run(1, () => thenable)).toBe(thenable);
    await sleep(50);
    expect(ctx.tracking()).toBe(true);
    settle();
    await sleep(50);
    expect(ctx.tracking()).toBe(false);
  });

  it('counts work that throws, synchronously or not, as finished', async () => {
    const ctx = createLazyContext<number>(10);
    expect(() =>
      ctx.run(1, () => {
        throw new Error('sync');
      }),
    ).toThrow('sync');
    await expect(ctx.run(2, async () => Promise.reject(new Error('async')))).rejects.toThrow('async');
    await sleep(50);
    expect(ctx.tracking()).toBe(!lazyTracking);
  });
});
