// Benchmark: webhook deliveries per second from ONE dispatcher to a local HTTPS receiver.
// Usage: npx tsx bench/webhook-dispatch.ts   (BENCH_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres,
// or BENCH_DATABASE=pglite for the embedded engine; BENCH_DELIVERIES, default 3000; WEBHOOK_BATCH_SIZE, default 50).
// The receiver runs in its own process on loopback with a throwaway self-signed certificate and answers 200 at
// once; the dispatcher runs its ticks back to back (no cron wait) until every delivery is DELIVERED. Bounded run.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import selfsigned from 'selfsigned';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createScratchDatabase } from '../scripts/scratch-database.ts';
import { transaction } from '../src/db/transaction.ts';
import { emit } from '../src/events/outbox.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { createWebhookDispatcher } from '../src/delivery/dispatcher.ts';
import { EVENT_EXAMPLES } from '../src/delivery/event-examples.ts';
import { createWebhookSender } from '../src/delivery/sender.ts';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const ENGINE = process.env.BENCH_DATABASE === 'pglite' ? 'pglite' : 'postgresql';
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 3000);
const BATCH = process.env.WEBHOOK_BATCH_SIZE ?? '50';

async function receiverProcess() {
  const server = https.createServer({ cert: process.env.BENCH_CERT!, key: process.env.BENCH_KEY! }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as AddressInfo).port));
}

async function openBenchDatabase(): Promise<{ db: Database; drop(): Promise<void> }> {
  if (ENGINE === 'pglite') {
    const db = await openDatabase({ dataDir: 'memory://' });
    await migrate(db.sql);
    return { db, drop: () => db.close() };
  }
  const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_wh');
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 10 });
  await migrate(db.sql);
  return {
    db,
    async drop() {
      await db.close();
      await scratch.drop();
    },
  };
}

async function main() {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256' });
  const caFile = path.join(os.tmpdir(), `fleet-bench-ca-${randomBytes(6).toString('hex')}.pem`);
  writeFileSync(caFile, pems.cert);
  const receiver = fork(fileURLToPath(import.meta.url), ['receiver'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CERT: pems.cert, BENCH_KEY: pems.private },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) => receiver.once('message', (m) => resolve(Number(m))));
  const { db, drop } = await openBenchDatabase();
  try {
    const admin = createOrgAdmin(db);
    const org = await admin.createOrg('Bench Fleet', `bench-${randomBytes(3).toString('hex')}`);
    await db.prisma.webhookSubscription.create({
      data: { orgId: org.id, url: `https://localhost:${port}/hook`, events: ['tool.created'], secret: 'whsec_bench' },
    });
    for (let done = 0; done < DELIVERIES; done += 500) {
      await transaction(db, async (tx) => {
        for (let i = done; i < Math.min(done + 500, DELIVERIES); i++) {
          await emit(tx, org.id, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `tool-${i}` });
        }
      });
    }
    const config = loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_BATCH_SIZE: BATCH });
    const log = pino({ level: 'warn' }) as unknown as FastifyBaseLogger;
    const sender = createWebhookSender({ timeoutMs: config.webhooks.timeoutMs, allowPrivateNetworks: true, caFile });
    const dispatcher = createWebhookDispatcher({ db, config, log, sender });

    const started = process.hrtime.bigint();
    let delivered = 0;
    let ticks = 0;
    for (;;) {
      const summary = await dispatcher.dispatchOnce();
      if (summary.claimed === 0) break;
      delivered += summary.delivered;
      ticks++;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await sender.close();
    const result = {
      benchmark: 'webhook-dispatch', database: db.kind, deliveries: delivered, ticks, batchSize: Number(BATCH),
      seconds: Number(seconds.toFixed(2)), deliveriesPerSecond: Math.round(delivered / seconds),
    };
    console.log(JSON.stringify(result));
    console.log(`${result.deliveriesPerSecond} deliveries/s (${delivered} in ${result.seconds} s, ${db.kind}, batch ${BATCH})`);
    if (delivered !== DELIVERIES) throw new Error(`expected ${DELIVERIES} deliveries, got ${delivered}`);
  } finally {
    receiver.kill();
    rmSync(caFile, { force: true });
    await drop();
  }
}

if (process.argv[2] === 'receiver') {
  void receiverProcess();
} else {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
