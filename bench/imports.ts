// Benchmark of imports on PostgreSQL, in process (app.inject, no network):
// - a 1,000-asset file: upload and validation, then commit, wall time each;
// - a meter-reading file of BENCH_READINGS rows (100,000 by default, about 10 MB: BENCH_ASSETS assets with readings
//   a day apart): upload and validation, then commit, wall time each, and the peak RSS of the process meanwhile;
// - GET /api/v1/assets?limit=50 in a loop during the meter-reading commit: p50/p99.
// Usage: npm run bench:imports. Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (fleet_bench_imports, prefix of a
// scratch database, dropped after), BENCH_READINGS (100000), BENCH_ASSETS (200), BENCH_ONLY=assets (the assets only).
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createBenchTenant } from './lib/seed.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, log, num, sleep, text } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { median, pct } from './lib/stats.ts';

const round = (n: number) => Math.round(n);

const NAME = text('BENCH_DB', 'fleet_bench_imports');
const READINGS = num('BENCH_READINGS', 100_000);
const ASSETS = num('BENCH_ASSETS', 200);
const ONLY = text('BENCH_ONLY', '');
const DAY = 86_400_000;

function multipart(type: string, csv: Buffer) {
  const boundary = 'bench-imports';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\n${type}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.csv"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  return {
    payload: Buffer.concat([head, csv, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

async function main() {
  const scratch = await createScratchDatabase(ADMIN_URL, NAME);
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused' });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  try {
    await migrate(db.sql);
    const { key } = await createBenchTenant(db, 'bench', { name: 'Bench Fleet', rateLimit: '100000000' });
    const config = loadConfig({
      DATABASE_URL: scratch.url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'error',
    });
    const deps = createDeps(config, db, pino({ level: 'error' }) as unknown as FastifyBaseLogger);
    const app = await buildApp(deps);
    const auth = { authorization: `Bearer ${key}` };
    const get = (url: string) => app.inject({ method: 'GET', url, headers: auth });
    const upload = async (type: string, csv: Buffer) => {
      const { payload, contentType } = multipart(type, csv);
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/imports',
        headers: { ...auth, 'content-type': contentType },
        payload,
      });
      if (res.statusCode !== 202) throw new Error(`upload: ${res.statusCode} ${res.body}`);
      return res.json().importId as string;
    };
    const until = async (id: string, done: string[]) => {
      for (;;) {
        const imp = (await get(`/api/v1/imports/${id}`)).json().import;
        if (done.includes(imp.status)) return imp;
        if (imp.status === 'failed') throw new Error(`import failed: ${imp.failureReason}`);
        await sleep(100);
      }
    };
    const run = async (type: string, csv: Buffer) => {
      let t = performance.now();
      const id = await upload(type, csv);
      const validated = await until(id, ['validated']);
      const validateMs = performance.now() - t;
      t = performance.now();
      const commit = await app.inject({ method: 'POST', url: `/api/v1/imports/${id}/commit`, headers: auth });
      if (commit.statusCode !== 202) throw new Error(`commit: ${commit.statusCode} ${commit.body}`);
      return { id, validated, validateMs, commitStarted: t };
    };

    // ---- 1,000 assets
    const assetRows = ['customerAssetNumber,nickname,assetClass,vin,purchaseCost'];
    for (let i = 1; i <= 1000; i++) assetRows.push(`B-${i},Machine ${i},off-road,VIN${i},${1000 + i}.50`);
    const assets = await run('assets', Buffer.from(assetRows.join('\r\n')));
    await until(assets.id, ['completed']);
    const assetCommitMs = performance.now() - assets.commitStarted;
    log(`1,000 assets: validate ${round(assets.validateMs)} ms, commit ${round(assetCommitMs)} ms`);
    if (ONLY === 'assets') {
      writeResults('imports', {
        assets: { rows: 1000, validateMs: round(assets.validateMs), commitMs: round(assetCommitMs) },
      });
      await app.close();
      await deps.close();
      return;
    }

    // ---- meter readings for BENCH_ASSETS of them, a day apart, in file order by time
    const start = Date.UTC(2020, 0, 1);
    const perAsset = Math.ceil(READINGS / ASSETS);
    const lines = ['customerAssetNumber,loggedAt,hoursReading,note'];
    for (let d = 0; d < perAsset; d++)
      for (let a = 1; a <= ASSETS && lines.length <= READINGS; a++)
        lines.push(`B-${a},${new Date(start + d * DAY).toISOString()},${(d * 8.25).toFixed(2)},imported`);
    const file = Buffer.from(lines.join('\r\n'));
    log(`meter readings: ${lines.length - 1} rows, ${(file.length / 2 ** 20).toFixed(1)} MB`);
    peakRss = process.memoryUsage().rss;
    const readings = await run('meter_readings', file);
    log(`validate ${round(readings.validateMs)} ms, counts ${JSON.stringify(readings.validated.counts)}`);
    const listTimes: number[] = [];
    let committed = false;
    const done = until(readings.id, ['completed', 'partially_completed']).then(() => (committed = true));
    while (!committed) {
      const t = performance.now();
      const res = await get('/api/v1/assets?limit=50');
      listTimes.push(performance.now() - t);
      if (res.statusCode !== 200) throw new Error(`list: ${res.statusCode}`);
      await sleep(20);
    }
    await done;
    const readingCommitMs = performance.now() - readings.commitStarted;
    log(`commit ${round(readingCommitMs)} ms, peak RSS ${round(peakRss / 2 ** 20)} MB`);
    log(
      `GET /assets during the commit: p50 ${median(listTimes).toFixed(1)} ms, p99 ${pct(listTimes, 99).toFixed(1)} ms`,
    );

    writeResults('imports', {
      assets: { rows: 1000, validateMs: round(assets.validateMs), commitMs: round(assetCommitMs) },
      meterReadings: {
        rows: lines.length - 1,
        megabytes: round(file.length / 2 ** 20),
        validateMs: round(readings.validateMs),
        commitMs: round(readingCommitMs),
        peakRssMb: round(peakRss / 2 ** 20),
      },
      listAssetsDuringCommit: { samples: listTimes.length, p50Ms: median(listTimes), p99Ms: pct(listTimes, 99) },
    });
    await app.close();
    await deps.close();
  } finally {
    clearInterval(sampler);
    await db.close();
    await scratch.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
