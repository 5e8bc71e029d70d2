// Benchmark of a telematics run on PostgreSQL: a 10,000-machine ISO 15143-3 feed in 100 JSON pages from a fake
// provider on loopback (HTTPS), every machine matched to an HOURS asset, every reading through the meter pipeline;
// then the same feed again (every reading skipped). Reports each run's wall time (sync asked for -> run ended) and,
// to show memory flat across pages, the heap left after a forced full GC and the RSS at the start of the run and
// after pages 10, 50 and the last (taken when the provider is asked for the next page: the previous one is then
// committed; the time those samples take is left out of the run's time).
// Usage: npm run bench:telematics (tsx --expose-gc; without it the GC is exposed at run time through v8 flags).
// Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (prefix of the scratch database, dropped after, default
// fleet_bench_telematics), BENCH_MACHINES (10000), BENCH_PAGE (100 machines per page).
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import selfsigned from 'selfsigned';
import type { FastifyBaseLogger } from 'fastify';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, log, num, text } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';

const NAME = text('BENCH_DB', 'fleet_bench_telematics');
const MACHINES = num('BENCH_MACHINES', 10_000);
const PAGE = num('BENCH_PAGE', 100);

/** Page `n` (1-based) of the feed: machines with hours `base + i`, stamped `at`. */
function page(n: number, origin: string, hours: number, at: string): string {
  const pages = Math.ceil(MACHINES / PAGE);
  const equipment = [];
  for (let i = (n - 1) * PAGE; i < Math.min(n * PAGE, MACHINES); i++)
    equipment.push({
      EquipmentHeader: { OEMName: 'CAT', Model: '320', EquipmentID: `EQ${i}`, SerialNumber: `SN${i}`, PIN: `PIN${i}` },
      Location: { datetime: at, Latitude: 51 + i / 1e5, Longitude: -0.1 },
      CumulativeOperatingHours: { datetime: at, Hour: hours },
    });
  const links = [{ rel: 'self', href: `${origin}/fleet/${n}` }];
  if (n < pages) links.push({ rel: 'next', href: `${origin}/fleet/${n + 1}` });
  return JSON.stringify({ Links: links, Equipment: equipment });
}

/** A full GC: global.gc under --expose-gc, else one exposed for the moment through v8's flags. */
const fullGc: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as () => void;
  })();

const mb = (n: number) => Math.round(n / 1e5) / 10;

/** Memory samples of one run: after `pages` pages, heap used after a full GC and RSS, in MB. */
const samples: { pages: number; heapMb: number; rssMb: number }[] = [];
let sampleMs = 0;
function sample(pages: number) {
  const started = performance.now();
  fullGc();
  const m = process.memoryUsage();
  samples.push({ pages, heapMb: mb(m.heapUsed), rssMb: mb(m.rss) });
  sampleMs += performance.now() - started;
}
const SAMPLED = new Set([10, 50]);

async function main() {
  const scratch = await createScratchDatabase(ADMIN_URL, NAME);
  const url = scratch.url;
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  const caFile = path.join(os.tmpdir(), `bench-telematics-${process.pid}.pem`);
  writeFileSync(caFile, pems.cert);
  const feed = { hours: 1010, at: new Date(Date.now() - 3_600_000).toISOString() };
  const server = https.createServer({ cert: pems.cert, key: pems.private }, (req, res) => {
    const n = Number(req.url?.split('/').pop());
    // Asked for page n: pages 1 to n - 1 are committed.
    if (SAMPLED.has(n - 1)) sample(n - 1);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(page(n, origin, feed.hours, feed.at));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  try {
    await migrate(db.sql);
    const config = loadConfig({
      DATABASE_URL: url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_CA_FILE: caFile,
      TELEMATICS_MAX_PAGES: '100000',
      LOG_LEVEL: 'warn',
    });
    const logger = pino({ level: 'warn' }) as unknown as FastifyBaseLogger;
    const deps = createDeps(config, db, logger);
    const org = await createOrgAdmin(db).createOrg('Bench', 'bench-telematics');
    await db.sql.query(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", vin, "lastMeterReading", "lastMeterAt")
       SELECT 'ta-' || g, $1, 'Machine ' || g, 'off-road', 'HOURS', 'hrs', 'PIN' || g, 1000, now() - interval '2 days'
       FROM generate_series(0, ${MACHINES - 1}) g`,
      [org.id],
    );
    const ctx = { orgId: org.id, keyId: 'bench', actorId: null, requestId: 'bench' };
    const { connectionId } = await deps.services.telematics.create(ctx, {
      name: 'Bench feed',
      standard: 'iso-15143-3',
      fleetUrl: `${origin}/fleet/1`,
      auth: { type: 'none' },
    });
    const results: Record<string, unknown> = { machines: MACHINES, pages: Math.ceil(MACHINES / PAGE) };
    for (const label of ['first run (every reading stored)', 'same feed again (every reading skipped)']) {
      samples.length = 0;
      sampleMs = 0;
      sample(0);
      const started = performance.now();
      await deps.services.telematics.sync(ctx, connectionId);
      await deps.background.idle();
      const ms = Math.round(performance.now() - started - sampleMs);
      const [run] = await db.sql.query(
        `SELECT status, pages, matched, "readingsCreated", "readingsSkipped", error FROM telematics_runs
         WHERE "connectionId" = $1 ORDER BY "startedAt" DESC LIMIT 1`,
        [connectionId],
      );
      sample((run as { pages: number }).pages);
      results[label] = { ms, run, memory: [...samples] };
      log(`${label}: ${ms} ms ${JSON.stringify(run)}`);
      for (const m of samples) log(`  after ${m.pages} pages: heap ${m.heapMb} MB after GC, RSS ${m.rssMb} MB`);
    }
    console.log(`results: ${writeResults('telematics', results)}`);
    await deps.close();
  } finally {
    await db.close();
    server.close();
    await scratch.drop();
  }
}

await main();
