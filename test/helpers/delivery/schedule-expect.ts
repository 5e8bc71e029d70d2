import { expect } from 'vitest';
import type { DeliveryLog, Watch } from './attempt-log.ts';
import { eventually } from './harness.ts';

/**
 * How late an attempt may be against its due time in these tests: the bound (one 1 s tick + 1 s) plus
 * an allowance for a loaded CI machine (measured up to ~8 s at load average 20 on 2 cores, the first wave of TLS
 * handshakes being the slowest). It still fails the behaviour the tests guard against: an open breaker holding
 * due rows for its 30 s cooldown (up to 10 min). The strict bound is measured from outside by
 * bench/webhook-schedule.ts.
 */
export const LATENESS_TOLERANCE_MS = 2_000 + 10_000;

/**
 * Waits until `expected` deliveries are final, then checks the schedule was kept: every one ABANDONED after
 * exactly `attempts` attempts, each made within `toleranceMs` of its due time. Start the watch before queueing.
 */
export async function expectScheduleKept(
  watch: Watch,
  {
    expected,
    attempts,
    toleranceMs,
    withinMs,
  }: { expected: number; attempts: number; toleranceMs: number; withinMs: number },
): Promise<DeliveryLog[]> {
  try {
    await eventually(() => {
      return (
        watch.logs.size === expected &&
        [...watch.logs.values()].every((l) => l.status === 'ABANDONED' || l.status === 'DELIVERED')
      );
    }, withinMs);
  } catch (err) {
    const by = new Map<string, number>();
    for (const l of watch.logs.values())
      by.set(`${l.status}/${l.attempts.length}`, (by.get(`${l.status}/${l.attempts.length}`) ?? 0) + 1);
    throw new Error(
      `${(err as Error).message}: ${watch.logs.size} of ${expected} seen; status/attempts ${JSON.stringify([...by])}`,
    );
  } finally {
    await watch.stop();
  }
  const logs = [...watch.logs.values()];
  expect(logs.filter((l) => l.status !== 'ABANDONED')).toEqual([]);
  expect(logs.filter((l) => l.attempts.length !== attempts || l.missed > 0)).toEqual([]);
  const late = logs.flatMap((l) => l.attempts.filter((a) => a.at - a.due > toleranceMs));
  const summary = late.map((a) => `#${a.n} +${a.at - a.due}ms ${a.error?.slice(0, 40)}`);
  expect(summary, `worst lateness ${watch.worstLatenessMs()} ms`).toEqual([]);
  return logs;
}
