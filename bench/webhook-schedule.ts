// Benchmark: the retry schedule behind an open circuit breaker, one process, PostgreSQL.
// Usage: npm run bench:webhook-schedule   Env: BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres),
// BENCH_HANGING (500 deliveries), BENCH_SECONDS (10: the healthy tenant's run, 10 events/s).
// Set-up: WEBHOOK_RETRY_SCHEDULE=1,1,1,1,1,1, WEBHOOK_TIMEOUT_MS=1000, a 1 s poll, breaker defaults.
// Prints: the healthy tenant's commit-to-receipt p50/p99 while the hanging receiver's deliveries walk the schedule,
// the dead endpoint's worst lateness of any attempt against its due time, its attempts per delivery and the time
// until all of them are ABANDONED.
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { queueAll, watchAttempts } from '../test/helpers/delivery/attempt-log.ts';
import { startReceiver } from '../test/helpers/delivery/receiver.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { transaction } from '../src/db/transaction.ts';
import { createDelivery } from '../src/delivery/delivery.ts';
import { EVENT_EXAMPLES } from '../src/delivery/event-examples.ts';
import { emit } from '../src/events/outbox.ts';
import { createTenant } from '../test/helpers/app/tenants.ts';
import { ADMIN_URL, num, sleep } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { pct } from './lib/stats.ts';

const HANGING = num('BENCH_HANGING', 500);
const SECONDS = num('BENCH_SECONDS', 10);

async function main() {
  const receiver = await startReceiver();
  const arrived = new Map<string, number>();
  receiver.respond = (req) => {
    if (req.path === '/hang') return { delayMs: 600_000 };
    arrived.set(req.json?.data?.toolId, Date.now());
    return {};
  };
  const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_sched');
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 10 });
  await migrate(db.sql);
  const config = loadConfig({
    DATABASE_URL: scratch.url,
    SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_POLL_MS: '1000',
    INSTANCE_ID: 'bench',
  });
  const delivery = createDelivery({ db, config, log: pino({ level: 'warn' }) as unknown as FastifyBaseLogger });
  await delivery.start();
  const healthy = await createTenant(db, 'Healthy');
  await db.prisma.webhookSubscription.create({
    data: { orgId: healthy.orgId, url: `${receiver.origin}/ok`, events: ['tool.created'], secret: 'whsec_bench' },
  });

  const watched = new Map<string, number>();
  const watch = watchAttempts(db, watched, 250);
  const started = Date.now();
  await queueAll(db, receiver.origin, [['/hang', HANGING]], watched);
  const committed = new Map<string, number>();
  for (let i = 0; i < SECONDS * 10; i++) {
    const toolId = `ok-${i}`;
    await transaction(db, (tx) =>
      emit(tx, healthy.orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId }),
    );
    committed.set(toolId, Date.now());
    await sleep(100);
  }
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const logs = [...watch.logs.values()];
    if (logs.length === HANGING && logs.every((l) => l.status === 'ABANDONED')) break;
    await sleep(200);
  }
  const abandonedAfterSec = (Date.now() - started) / 1000;
  await watch.stop();
  const logs = [...watch.logs.values()];
  const latencies = [...committed].filter(([id]) => arrived.has(id)).map(([id, at]) => arrived.get(id)! - at);
  const summary = {
    benchmark: 'webhook-schedule',
    hangingDeliveries: HANGING,
    healthy: {
      sent: committed.size,
      received: latencies.length,
      p50Ms: pct(latencies, 50),
      p99Ms: pct(latencies, 99),
    },
    dead: {
      abandoned: logs.filter((l) => l.status === 'ABANDONED').length,
      attemptsPerDelivery: [...new Set(logs.map((l) => l.attempts.length))],
      worstLatenessMs: watch.worstLatenessMs(),
      allAbandonedWithinSec: Number(abandonedAfterSec.toFixed(1)),
      realSends: receiver.requests.filter((r) => r.path === '/hang').length,
    },
  };
  console.log(JSON.stringify(summary));
  writeResults('webhook-schedule', summary);
  await delivery.close();
  await receiver.close();
  await db.close();
  await scratch.drop();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
