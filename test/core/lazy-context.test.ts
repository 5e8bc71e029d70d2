import { describe, expect, it } from 'vitest';
import { createLazyContext } from '../../src/core/lazy-context.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

  it('stops tracking once idle, starts again for the next work, and keeps it while work is in flight', async () => {
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
  });

  it('holds on while a thenable that is not a promise (a Fastify reply) is unsettled', async () => {
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
    expect(ctx.tracking()).toBe(false);
  });
});
