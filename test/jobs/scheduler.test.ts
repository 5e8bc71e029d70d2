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
  const deps = { logger: { error: (...args: unknown[]) => errors.push(args) } } as unknown as AppDeps;
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

  it('schedules nothing when stopped before its delay', async () => {
    const { deps } = fakeDeps();
    const job = countingJob();
    const early = startScheduler(deps, { jobs: [job.definition], delayMs: 300 });
    await early.stop();
    await sleep(1_500);
    expect(job.ticks).toBe(0);
  }, 10_000);
});
