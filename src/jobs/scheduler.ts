import cron, { type ScheduledTask } from 'node-cron';
import type { AppDeps } from '../composition.ts';
import { JOBS, type JobDefinition } from './jobs.ts';

export interface Scheduler {
  /** Stops scheduling and waits for ticks already running (bounded by the caller's shutdown timeout). */
  stop(): Promise<void>;
}

/**
 * Runs each registered job on its cron. A tick never overlaps the previous one of the same job; a failing
 * tick is logged and the next one runs as usual.
 */
export function startScheduler(
  deps: AppDeps,
  jobs = JOBS.map((make) => make(deps)).filter((j): j is JobDefinition => j !== null),
): Scheduler {
  const running = new Set<Promise<unknown>>();
  const tasks: ScheduledTask[] = jobs.map((job) => {
    if (!cron.validate(job.cron)) throw new Error(`job ${job.name}: invalid cron expression "${job.cron}"`);
    let busy = false;
    return cron.schedule(
      job.cron,
      async () => {
        if (busy) return;
        busy = true;
        const tick = job
          .run()
          .catch((err: unknown) => deps.logger.error({ err, job: job.name }, 'scheduled job failed'))
          .finally(() => {
            busy = false;
            running.delete(tick);
          });
        running.add(tick);
        await tick;
      },
      { name: job.name },
    );
  });
  return {
    async stop() {
      for (const task of tasks) await task.stop();
      await Promise.allSettled([...running]);
      for (const task of tasks) await task.destroy();
    },
  };
}
