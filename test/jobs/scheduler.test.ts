import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../src/composition.ts';
import { startScheduler, type Scheduler } from '../../src/jobs/scheduler.ts';
import type { JobDefinition } from '../../src/jobs/jobs.ts';
import { eventually } from '../helpers/delivery/harness.ts';

/** A job every second that counts its ticks; `fail` makes each tick throw after counting. */
function countingJob(fail = false) {
  const job = {
    ticks: 0,
    definition: {
      name: 'counting',
      cron: '* * * * * *',
      run: async () => {
        job.ticks += 1;
        if (fail) throw new Error('tick failed');
      },
    } satisfies JobDefinition,
  };
  return job;
}

function fakeDeps() {
  const errors: unknown[] = [];
  const deps = {
    logger: { error: (...args: unknown[]) => errors.push(args), debug: () => {} },
  } as unknown as AppDeps;
  return { deps, errors };
}

describe('scheduler', () => {
  let scheduler: Scheduler | null = null;
  afterEach(async () => {
    await scheduler?.stop();
    scheduler = null;
  });

  it('refuses an invalid cron expression at once, even when scheduling is delayed', () => {
    const { deps } = fakeDeps();
    const bad = { name: 'bad', cron: 'every minute', run: async () => {} };
    expect(() => startScheduler(deps, { jobs: [bad], delayMs: 1_000 })).toThrow(/job bad: invalid cron expression/);
  });

  it('runs the jobs once the delay has passed, and a failing tick is logged and followed by the next', async () => {
    const { deps, errors } = fakeDeps();
    const job = countingJob(true);
    scheduler = startScheduler(deps, { jobs: [job.definition], delayMs: 100 });
    await eventually(() => job.ticks >= 2);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(errors[0])).toContain('scheduled job failed');
  }, 10_000);

  it('never starts a tick of a job while its previous one runs (node-cron noOverlap), and stop waits for it', async () => {
    const { deps, errors } = fakeDeps();
    let running = 0;
    let most = 0;
    let ticks = 0;
    const slow: JobDefinition = {
      name: 'slow',
      cron: '* * * * * *',
      run: async () => {
        ticks += 1;
        running += 1;
        most = Math.max(most, running);
        await sleep(2_300);
        running -= 1;
      },
    };
    scheduler = startScheduler(deps, { jobs: [slow] });
    await eventually(() => ticks >= 2, 10_000);
    expect(most).toBe(1);
    await scheduler.stop();
    scheduler = null;
    expect(running).toBe(0);
    expect(errors).toEqual([]);
  }, 15_000);

  it('schedules nothing when stopped before its delay', async () => {
    const { deps } = fakeDeps();
    const job = countingJob();
    const early = startScheduler(deps, { jobs: [job.definition], delayMs: 300 });
    await early.stop();
    await sleep(1_500);
    expect(job.ticks).toBe(0);
  }, 10_000);
});
