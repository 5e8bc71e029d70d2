import type { FastifyBaseLogger } from 'fastify';
import type { Claims, RecordedOutcome } from './claims.ts';

const FLUSH_MS = 20;
const MAX_BATCH = 500;

/**
 * Batches delivery outcomes into one UPDATE per few milliseconds instead of one round trip per send. Each
 * record() resolves with whether the row was written (false: deleted meanwhile, or the claim was lost).
 * A failed write leaves the row leased; it is re-sent when the lease runs out (at least once).
 */
export function createOutcomeWriter(claims: Claims, log: FastifyBaseLogger) {
  let queue: { outcome: RecordedOutcome; done: (written: boolean) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function write(batch: typeof queue) {
    try {
      const written = await claims.record(batch.map((b) => b.outcome));
      for (const b of batch) b.done(written.has(b.outcome.id));
    } catch (err) {
      log.error({ err, deliveries: batch.length }, 'could not record webhook outcomes; re-sent after their lease');
      for (const b of batch) b.done(false);
    }
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (queue.length === 0) return flushing;
    const batch = queue;
    queue = [];
    flushing = flushing.then(() => write(batch));
    return flushing;
  }

  return {
    record(outcome: RecordedOutcome): Promise<boolean> {
      return new Promise((done) => {
        queue.push({ outcome, done });
        if (queue.length >= MAX_BATCH) void flush();
        else timer ??= setTimeout(() => void flush(), FLUSH_MS);
      });
    },
    /** Writes everything queued so far (shutdown, tick mode). */
    flush,
  };
}
