// Benchmark: the webhook delivery engine of ONE process against a loopback HTTPS receiver (own process).
// Usage: npm run bench:webhook-delivery   Env: BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres),
// BENCH_ROUNDS (3), BENCH_DELIVERIES per throughput run (2000), BENCH_SECONDS per latency run (8)
// BENCH_ONLY=throughput (the two throughput comparisons only).
// Prints, from alternating rounds and compared by median (the machine is shared and noisy):
//  1. throughput: deliveries/s of the engine (default configuration, 20 subscriptions) vs a raw undici loop posting
//     the same signed envelopes with the same concurrency to the same receiver; and the same for ONE busy
//     subscription (raw loop at WEBHOOK_SUBSCRIPTION_CONCURRENCY);
//  2. latency: p50/p99 from commit to receipt at a steady 100 events/s over 20 subscriptions of 10 organisations;
//  3. isolation: one healthy subscription's p50/p99 alone vs beside a receiver that never answers and one
//     answering 500.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import selfsigned from 'selfsigned';
import { Agent, request } from 'undici';
import type { FastifyBaseLogger } from 'fastify';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { transaction } from '../src/db/transaction.ts';
import { createDelivery } from '../src/delivery/delivery.ts';
import { EVENT_EXAMPLES } from '../src/delivery/event-examples.ts';
import { signEnvelope } from '../src/delivery/signer.ts';
import { emit } from '../src/events/outbox.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { ADMIN_URL, num, sleep } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { median, pct, round, roundRatios } from './lib/stats.ts';

const ROUNDS = num('BENCH_ROUNDS', 3);
const DELIVERIES = num('BENCH_DELIVERIES', 2000);
const SECONDS = num('BENCH_SECONDS', 8);

/** The receiver: 200 at once; /hang never answers; /fail answers 500; /lat records arrival per toolId. */
function receiverProcess() {
  const arrivals: [string, number][] = [];
  const server = https.createServer({ cert: process.env.BENCH_CERT!, key: process.env.BENCH_KEY! }, (req, res) => {
    if (req.url === '/hang') {
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => req.url!.startsWith('/lat') && chunks.push(c));
    req.on('end', () => {
      if (chunks.length) arrivals.push([JSON.parse(Buffer.concat(chunks).toString()).data.toolId, Date.now()]);
      res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', () => process.send!({ arrivals: arrivals.splice(0) }));
}

async function main() {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
  });
  const caFile = path.join(os.tmpdir(), `fleet-bench-ca-${randomBytes(6).toString('hex')}.pem`);
  writeFileSync(caFile, pems.cert);
  const receiver: ChildProcess = fork(fileURLToPath(import.meta.url), ['receiver'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CERT: pems.cert, BENCH_KEY: pems.private },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // A failed run exits without reaching the clean-up below: the receiver must not outlive it.
  process.once('exit', () => receiver.kill());
  const { port } = await new Promise<{ port: number }>((resolve) =>
    receiver.once('message', (m) => resolve(m as { port: number })),
  );
  const origin = `https://localhost:${port}`;
  const arrivals = () =>
    new Promise<Map<string, number>>((resolve) => {
      receiver.once('message', (m) => resolve(new Map((m as { arrivals: [string, number][] }).arrivals)));
      receiver.send('report');
    });
  const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_wh');
  const db: Database = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 10 });
  await migrate(db.sql);
  const log = pino({ level: 'warn' }) as unknown as FastifyBaseLogger;
  const config = loadConfig({
    DATABASE_URL: scratch.url,
    SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_CA_FILE: caFile,
    INSTANCE_ID: 'bench',
    LOG_LEVEL: 'warn',
  });
  const admin = createOrgAdmin(db);
  const newOrg = async (name: string) =>
    (await admin.createOrg(name, `${name.toLowerCase().replace(/\W+/g, '-')}-${randomBytes(3).toString('hex')}`)).id;
  const subscribe = (orgId: string, p: string, event: 'tool.created' | 'tool.serviced') =>
    db.prisma.webhookSubscription.create({
      data: { orgId, url: `${origin}${p}`, events: [event], secret: 'whsec_bench' },
    });
  const emitMany = (orgId: string, n: number, prefix: string) =>
    transaction(db, async (tx) => {
      for (let i = 0; i < n; i++)
        await emit(tx, orgId, 'tool.created', { ...EVENT_EXAMPLES['tool.created'], toolId: `${prefix}${i}` });
    });

  // Throughput: 10 orgs × 2 subscriptions of tool.created; each run queues DELIVERIES rows, then starts the engine.
  const tputOrgs: string[] = [];
  for (let o = 0; o < 10; o++) {
    tputOrgs.push(await newOrg(`Throughput ${o}`));
    for (let s = 0; s < 2; s++) await subscribe(tputOrgs[o], '/tput', 'tool.created');
  }
  // Single busy receiver: one subscription, its share of the senders (WEBHOOK_SUBSCRIPTION_CONCURRENCY).
  const singleOrg = await newOrg('Single');
  await subscribe(singleOrg, '/single', 'tool.created');
  async function engineRun(single = false): Promise<number> {
    if (single) await emitMany(singleOrg, DELIVERIES, 's');
    else for (let o = 0; o < 10; o++) await emitMany(tputOrgs[o], DELIVERIES / 20, 'x');
    let delivered = 0;
    const delivery = createDelivery({ db, config, log, onOutcome: () => delivered++ });
    const started = performance.now();
    await delivery.start();
    while (delivered < DELIVERIES) await sleep(5);
    const seconds = (performance.now() - started) / 1000;
    await delivery.close();
    return DELIVERIES / seconds;
  }
  async function rawRun(single = false): Promise<number> {
    const agent = new Agent({ connect: { ca: [pems.cert] }, keepAliveTimeout: 10_000 });
    let next = 0;
    const started = performance.now();
    const width = single ? config.webhooks.subscriptionConcurrency : config.webhooks.concurrency;
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < DELIVERIES) {
          const i = next++;
          const signed = signEnvelope('whsec_bench', {
            id: `raw-${i}`,
            eventId: `evt-${i}`,
            event: 'tool.created',
            organizationId: 'org',
            data: { ...EVENT_EXAMPLES['tool.created'], toolId: `r${i}` },
          });
          const res = await request(`${origin}/tput`, {
            method: 'POST',
            body: signed.body,
            headers: signed.headers,
            dispatcher: agent,
          });
          await res.body.dump();
          if (res.statusCode !== 200) throw new Error(`raw loop got ${res.statusCode}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await agent.close();
    return DELIVERIES / seconds;
  }

  // Latency: 10 orgs × 2 subscriptions of tool.serviced (/lat); one event every 10 ms, round-robin over the orgs.
  const latOrgs: string[] = [];
  for (let o = 0; o < 10; o++) {
    latOrgs.push(await newOrg(`Latency ${o}`));
    for (let s = 0; s < 2; s++) await subscribe(latOrgs[o], `/lat${o}-${s}`, 'tool.serviced');
  }
  /** Emits at `perSecond` for SECONDS into the given orgs; returns commit→receipt latencies in ms (when `measure`). */
  async function steady(orgs: string[], perSecond: number, tag: string, measure = true): Promise<number[]> {
    const committed = new Map<string, number>();
    const started = performance.now();
    const total = SECONDS * perSecond;
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / perSecond;
      if (due > performance.now()) await sleep(due - performance.now());
      const toolId = `${tag}-${i}`;
      inFlight.push(
        transaction(db, (tx) =>
          emit(tx, orgs[i % orgs.length], 'tool.serviced', {
            ...EVENT_EXAMPLES['tool.serviced'],
            toolId,
          } as never),
        ).then(() => void committed.set(toolId, Date.now())),
      );
    }
    await Promise.all(inFlight);
    if (!measure) return [];
    await sleep(2_500);
    const got = await arrivals();
    const latencies: number[] = [];
    for (const [toolId, at] of got) if (committed.has(toolId)) latencies.push(at - committed.get(toolId)!);
    return latencies;
  }

  // Isolation: a healthy org (/lat-h) alone, then beside an org whose receiver hangs and one answering 500.
  const healthy = await newOrg('Healthy');
  await subscribe(healthy, '/lat-h', 'tool.serviced');
  const hanging = await newOrg('Hanging');
  await subscribe(hanging, '/hang', 'tool.serviced');
  const failing = await newOrg('Failing');
  await subscribe(failing, '/fail', 'tool.serviced');

  const results = {
    engine: [] as number[],
    raw: [] as number[],
    singleEngine: [] as number[],
    singleRaw: [] as number[],
    p50: [] as number[],
    p99: [] as number[],
    aloneP50: [] as number[],
    aloneP99: [] as number[],
    besideP50: [] as number[],
    besideP99: [] as number[],
  };
  await engineRun(); // warm-up
  await rawRun();
  for (let r = 0; r < ROUNDS; r++) {
    const [first, second] = r % 2 === 0 ? [engineRun, rawRun] : [rawRun, engineRun];
    const a = await first();
    const b = await second();
    results.engine.push(first === engineRun ? a : b);
    results.raw.push(first === engineRun ? b : a);
    const c = await first(true);
    const d = await second(true);
    results.singleEngine.push(first === engineRun ? c : d);
    results.singleRaw.push(first === engineRun ? d : c);
    console.error(
      `round ${r + 1}: single receiver engine ${Math.round(results.singleEngine[r])}/s raw ${Math.round(results.singleRaw[r])}/s`,
    );
    if (process.env.BENCH_ONLY === 'throughput') continue;

    const delivery = createDelivery({ db, config, log });
    await delivery.start();
    const lat = await steady(latOrgs, 100, `lat${r}`);
    results.p50.push(pct(lat, 50));
    results.p99.push(pct(lat, 99));
    const alone = async () => {
      const l = await steady([healthy], 20, `alone${r}`);
      results.aloneP50.push(pct(l, 50));
      results.aloneP99.push(pct(l, 99));
    };
    const beside = async () => {
      const noise = steady([hanging, failing], 50, `noise${r}`, false);
      const l = await steady([healthy], 20, `beside${r}`);
      await noise;
      results.besideP50.push(pct(l, 50));
      results.besideP99.push(pct(l, 99));
    };
    if (r % 2 === 0) {
      await alone();
      await beside();
    } else {
      await beside();
      await alone();
    }
    await delivery.close();
    // The hanging and failing backlogs must not follow into the next throughput run.
    await db.sql.exec(
      `UPDATE webhook_deliveries SET status = 'ABANDONED', "nextAttemptAt" = NULL WHERE status IN ('PENDING', 'FAILED')`,
    );
    console.error(
      `round ${r + 1}: engine ${Math.round(results.engine[r])}/s raw ${Math.round(results.raw[r])}/s; p50 ${results.p50[r]} p99 ${results.p99[r]} ms; healthy alone ${results.aloneP50[r]}/${results.aloneP99[r]} beside ${results.besideP50[r]}/${results.besideP99[r]} ms`,
    );
  }
  const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)])) as Record<
    keyof typeof results,
    number
  >;
  // Ratios pair the two sides of the same round (measured back to back), then take the median over rounds.
  const ratio = (a: number[], b: number[]) => (a.length ? round(roundRatios(a, b).median, 2) : null);
  const summary = {
    benchmark: 'webhook-delivery',
    rounds: ROUNDS,
    deliveriesPerRun: DELIVERIES,
    secondsPerLatencyRun: SECONDS,
    engineDeliveriesPerSecond: Math.round(m.engine),
    rawUndiciPerSecond: Math.round(m.raw),
    throughputRatio: ratio(results.engine, results.raw),
    singleReceiver: {
      engineDeliveriesPerSecond: Math.round(m.singleEngine),
      rawUndiciPerSecond: Math.round(m.singleRaw),
      ratio: ratio(results.singleEngine, results.singleRaw),
    },
    latencyAt100PerSecond: { p50Ms: m.p50, p99Ms: m.p99 },
    healthyAlone: { p50Ms: m.aloneP50, p99Ms: m.aloneP99 },
    healthyBesideHanging: { p50Ms: m.besideP50, p99Ms: m.besideP99 },
    isolationRatioP50: ratio(results.besideP50, results.aloneP50),
    isolationRatioP99: ratio(results.besideP99, results.aloneP99),
  };
  console.log(JSON.stringify(summary));
  writeResults('webhook-delivery', summary);
  receiver.kill();
  rmSync(caFile, { force: true });
  await db.close();
  await scratch.drop();
}

if (process.argv[2] === 'receiver') receiverProcess();
else
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
