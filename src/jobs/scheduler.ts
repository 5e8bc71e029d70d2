import cron, { type Logger, type ScheduledTask } from 'node-cron';
import type { AppDeps } from '../composition.ts';
import { JOBS, type JobDefinition } from './jobs.ts';

export interface Scheduler {
  /** Stops scheduling and waits for ticks already running (bounded by the caller's shutdown timeout). */
  stop(): Promise<void>;
}

/**
 * Runs each registered job on its cron. A tick never overlaps the previous one of the same job (node-cron's
 * noOverlap skips it); a failing tick is logged and the next one runs as usual.
 *
 * Every expression is checked at once (a bad WEBHOOK_DISPATCH_CRON fails the start). The tasks themselves can be
 * scheduled `delayMs` later: node-cron builds an Intl date formatter for its first task, an ICU set-up
 * that the server does after it can answer requests rather than before (start-up to the first healthy answer).
 */
export function startScheduler(
  deps: AppDeps,
  {
    jobs = JOBS.map((make) => make(deps)).filter((j): j is JobDefinition => j !== null),
    delayMs = 0,
  }: { jobs?: JobDefinition[]; delayMs?: number } = {},
): Scheduler {
  for (const job of jobs)
    if (!cron.validate(job.cron)) throw new Error(`job ${job.name}: invalid cron expression "${job.cron}"`);
  const running = new Set<Promise<unknown>>();
  let tasks: ScheduledTask[] = [];
  // node-cron's own notes (a tick skipped for overlap, a missed second) go to our log, not to the console.
  const cronLogger = (job: string): Logger => ({
    info: (msg) => deps.logger.debug({ job }, msg),
    warn: (msg) => deps.logger.debug({ job }, msg),
    debug: () => {},
    error: (msg, err) => deps.logger.error({ err: err ?? msg, job }, 'scheduled job failed'),
  });
  const schedule = () => {
    tasks = jobs.map((job) =>
      cron.schedule(
        job.cron,
        () => {
          const tick = job
            .run()
            .catch((err: unknown) => deps.logger.error({ err, job: job.name }, 'scheduled job failed'))
            .finally(() => running.delete(tick));
          running.add(tick);
          return tick;
        },
        { name: job.name, noOverlap: true, logger: cronLogger(job.name) },
      ),
    );
  };
  const timer = delayMs > 0 ? setTimeout(schedule, delayMs) : null;
  if (!timer) schedule();
  return {
    async stop() {
      // Stopped before its delay: nothing was scheduled, and nothing will be.
      if (timer) clearTimeout(timer);
      for (const task of tasks) await task.stop();
      await Promise.allSettled([...running]);
      for (const task of tasks) await task.destroy();
    },
  };
}
