import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app/test-app.ts';
import { eventually, startReceiver, type Receiver, type Reply } from '../helpers/delivery/harness.ts';
import { queueAll, watchAttempts } from '../helpers/delivery/attempt-log.ts';
import { expectScheduleKept, LATENESS_TOLERANCE_MS } from '../helpers/delivery/schedule-expect.ts';

// The set-up: a compressed schedule (1 s × 6), a 1 s dispatch tick (the poll), a 1 s send timeout, and
// the breaker at its defaults (5 failures, 30 s cooldown: capped to the shortest retry delay).
const ENV = {
  WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
  WEBHOOK_POLL_MS: '1000',
  WEBHOOK_TIMEOUT_MS: '1000',
  METRICS_TOKEN: 'metrics-token-for-tests',
};
const TICK_MS = 1_000;
const ATTEMPTS = 7;

let receiver: Receiver;
let t: TestApp;
const behaviours: Record<string, (path: string) => Reply> = {};
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.respond = (req) => {
    const prefix = Object.keys(behaviours).find((p) => req.path.startsWith(p));
    return prefix ? behaviours[prefix](req.path) : {};
  };
  t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile, ...ENV });
  await t.deps.delivery.start();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const failing: Record<string, Reply> = {
  '/answers-500': { status: 500 },
  '/resets': { reset: true },
  '/silent': { delayMs: 60_000 },
};

describe('the retry schedule holds whatever the breaker does', { timeout: 120_000 }, () => {
  it('1 and 50 deliveries to a receiver answering 500, one resetting connections and one never answering', async () => {
    for (const [path, reply] of Object.entries(failing)) behaviours[path] = () => reply;
    const subs = new Map<string, number>();
    const watch = watchAttempts(t.db, subs);
    await queueAll(
      t.db,
      receiver.origin,
      Object.keys(failing).flatMap((p): [string, number][] => [
        [`${p}/one`, 1],
        [`${p}/fifty`, 50],
      ]),
      subs,
    );
    const logs = await expectScheduleKept(watch, {
      expected: 3 * 51,
      attempts: ATTEMPTS,
      toleranceMs: LATENESS_TOLERANCE_MS,
      withinMs: 45_000,
    });
    // The breaker made attempts cheaper: most were recorded without a send, each saying why.
    const unsent = logs.flatMap((l) => l.attempts).filter((a) => a.error?.startsWith('not sent: receiver failing'));
    expect(unsent.length).toBeGreaterThan(0);
    expect(unsent[0].error).toMatch(
      /^not sent: receiver failing since \S+ \(circuit open after \d+ consecutive failures; last: .+\)$/,
    );
    const sent = receiver.requests.filter((r) => r.path.includes('/fifty')).length;
    expect(sent).toBeLessThan(3 * 50 * ATTEMPTS);
    // The metrics tell the two apart.
    const metrics = await t.deps.metrics.registry!.metrics();
    expect(metrics).toMatch(/webhook_deliveries_total\{outcome="skipped_circuit_open"\} [1-9]/);
  });

  it('delivers everything at its next retry when the receiver is down for 2.5 s, and fails nothing unsent after it recovered', async () => {
    let downUntil = Infinity;
    behaviours['/recovers'] = () => (Date.now() < downUntil ? { status: 503 } : {});
    const watched = new Map<string, number>();
    const watch = watchAttempts(t.db, watched);
    await queueAll(t.db, receiver.origin, [['/recovers', 50]], watched);
    downUntil = Date.now() + 2_500;
    try {
      await eventually(() => {
        return watch.logs.size === 50 && [...watch.logs.values()].every((l) => l.status === 'DELIVERED');
      }, 15_000);
    } finally {
      await watch.stop();
    }
    const attempts = [...watch.logs.values()].flatMap((l) => l.attempts);
    // Healthy for longer than the shortest retry delay (1 s): no attempt may be failed unsent any more.
    const unsentAfter = attempts.filter((a) => a.error?.startsWith('not sent') && a.at > downUntil + 1_000 + TICK_MS);
    expect(unsentAfter.map((a) => `#${a.n} at +${a.at - downUntil} ms`)).toEqual([]);
    const late = attempts.filter((a) => a.at - a.due > LATENESS_TOLERANCE_MS);
    expect(late.map((a) => `#${a.n} +${a.at - a.due} ms ${a.error}`)).toEqual([]);
    expect(Math.max(...[...watch.logs.values()].map((l) => l.attempts.length))).toBeLessThan(ATTEMPTS);
  });
});
