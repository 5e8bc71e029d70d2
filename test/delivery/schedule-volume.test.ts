import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createDelivery, type Delivery } from '../../src/delivery/delivery.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';
import { queueAll, watchAttempts } from '../helpers/delivery/attempt-log.ts';
import { expectScheduleKept, LATENESS_TOLERANCE_MS } from '../helpers/delivery/schedule-expect.ts';
import { eventually, silentLogger, startReceiver, type Receiver, type Reply } from '../helpers/delivery/harness.ts';
import { TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

// The set-up (see schedule.test.ts) at volume, and with two instances sharing the work.
const ENV = { WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1', WEBHOOK_POLL_MS: '1000', WEBHOOK_TIMEOUT_MS: '1000' };

const replies: Record<string, Reply> = {
  '/answers-500': { status: 500 },
  '/resets': { reset: true },
  '/silent': { delayMs: 60_000 },
};
let receiver: Receiver;
let db: TestDatabase;
const opened: Database[] = [];
const engines: Delivery[] = [];
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.respond = (req) => replies[Object.keys(replies).find((p) => req.path.startsWith(p)) ?? ''] ?? {};
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const e of engines) await e.close();
  for (const d of opened) await d.close();
  await db.close();
  await receiver.close();
});

/** One instance: its own id and (on PostgreSQL) its own connections; counts its outcomes. */
async function instance(id: string) {
  const own = onPostgres ? await openDatabase({ databaseUrl: db.url!, dataDir: 'unused', poolSize: 10 }) : db;
  if (own !== db) opened.push(own);
  const config = loadConfig({
    SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    INSTANCE_ID: id,
    LOG_LEVEL: 'silent',
    ...ENV,
  });
  const outcomes = { sent: 0, skipped: 0 };
  const engine = createDelivery({
    config,
    db: own,
    log: silentLogger(),
    onOutcome: (o) => (o === 'SKIPPED_CIRCUIT_OPEN' ? outcomes.skipped++ : outcomes.sent++),
  });
  engines.push(engine);
  await engine.start();
  return { engine, outcomes };
}

// PostgreSQL only: instances are real there (own connections), and 1,500 deliveries × 7 attempts beside another
// test file are too slow for the embedded single-connection PGlite to keep a 1 s schedule.
describe.skipIf(!onPostgres)('the retry schedule at volume and across instances', { timeout: 120_000 }, () => {
  it('two instances share the work: failing receivers keep the schedule, a healthy one gets each delivery once', async () => {
    // Both start before anything is queued (on PGlite a starting instance frees every claim: single process).
    const [one, two] = [await instance('one'), await instance('two')];
    const failing = new Map<string, number>();
    const watch = watchAttempts(db, failing);
    await queueAll(db, receiver.origin, [['/healthy/pair', 100]], new Map());
    await queueAll(
      db,
      receiver.origin,
      [
        ['/answers-500/pair', 50],
        ['/silent/pair', 50],
      ],
      failing,
    );
    await expectScheduleKept(watch, {
      expected: 100,
      attempts: 7,
      toleranceMs: LATENESS_TOLERANCE_MS,
      withinMs: 45_000,
    });
    const healthy = () => receiver.requests.filter((r) => r.path === '/healthy/pair');
    await eventually(() => new Set(healthy().map((r) => r.json.id)).size >= 100);
    const ids = healthy().map((r) => r.json.id as string);
    expect(new Set(ids).size).toBe(100);
    // Each delivered once per attempt at most: never sent twice on one claim (two instances). A second request
    // for an id is a retry after a recorded failed attempt (the 1 s timeout, on a loaded machine): at least once.
    const rows = await db.prisma.webhookDelivery.findMany({
      where: { id: { in: [...new Set(ids)] } },
      select: { id: true, status: true, attempts: true },
    });
    const sentMoreThanAttempted = rows
      .map((row) => ({ ...row, requests: ids.filter((id) => id === row.id).length }))
      .filter((row) => row.status !== 'DELIVERED' || row.requests > row.attempts);
    expect(rows).toHaveLength(100);
    expect(sentMoreThanAttempted).toEqual([]);
    expect(one.outcomes.sent + one.outcomes.skipped).toBeGreaterThan(0);
    expect(two.outcomes.sent + two.outcomes.skipped).toBeGreaterThan(0);
    for (const e of engines.splice(0)) await e.close();
  });

  it('500 deliveries to each of a receiver answering 500, one resetting connections and one never answering', async () => {
    await instance('solo');
    const subs = new Map<string, number>();
    const watch = watchAttempts(db, subs);
    await queueAll(
      db,
      receiver.origin,
      Object.keys(replies).map((p) => [`${p}/volume`, 500]),
      subs,
    );
    const logs = await expectScheduleKept(watch, {
      expected: 1500,
      attempts: 7,
      toleranceMs: LATENESS_TOLERANCE_MS,
      withinMs: 60_000,
    });
    // Cheap: most attempts were recorded without a send; each receiver saw only a few real ones per second.
    const sent = receiver.requests.filter((r) => r.path.endsWith('/volume')).length;
    expect(sent).toBeLessThan(logs.length);
  });
});
