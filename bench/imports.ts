// Benchmark of imports on PostgreSQL against the production entry in a child process (node dist/main.js: `npm run
// bench:imports` builds it first), over HTTP on loopback:
// - a 1,000-asset file (with a PM interval): upload and validation, then commit, wall time each;
// - a meter-reading file of BENCH_READINGS rows (100,000 by default, about 10 MB with its note column: BENCH_ASSETS
//   assets with readings a day apart), written to a temporary file and streamed from it as multipart/form-data:
//   upload and validation, then commit, wall time each, and the server's peak RSS (VmRSS every 20 ms, and VmHWM);
// - GET /api/v1/assets?limit=50 in a loop (20 ms apart) during the meter-reading commit: p50/p99, beside the same loop
//   on the idle server just before (BENCH_BASELINE_SEC seconds), the baseline of the same run.
// Usage: npm run bench:imports. Env: BENCH_DATABASE_URL (admin URL), BENCH_DB (fleet_bench_imports, prefix of a
// scratch database, dropped after), BENCH_READINGS (100000), BENCH_ASSETS (200), BENCH_PORT (4370),
// BENCH_BASELINE_SEC (10), BENCH_PROFILE (1: the server's CPU profile, top self times, after the run),
// BENCH_ONLY=assets (the assets file only).
import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createBenchTenant } from './lib/seed.ts';
import { API_ENTRY, requireBuild, ROOT, startApi, stop, type Server } from './lib/server.ts';
import { statusMb } from './lib/proc.ts';
import { topOfProfile, type CpuProfile } from './lib/profile.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, flag, log, num, sleep, text } from './lib/env.ts';
import { writeResults } from './lib/results.ts';
import { median, pct } from './lib/stats.ts';

const NAME = text('BENCH_DB', 'fleet_bench_imports');
const READINGS = num('BENCH_READINGS', 100_000);
const ASSETS = num('BENCH_ASSETS', 200);
const PORT = num('BENCH_PORT', 4370);
/** 1: the server runs under --cpu-prof and the top of its profile is printed after the run. */
const PROFILE = flag('BENCH_PROFILE');
/** `assets`: the 1,000-asset file only. */
const ONLY = text('BENCH_ONLY', '');
/** Seconds of GET /assets on the idle server before the readings: the baseline of the figure during the commit. */
const BASELINE_SEC = num('BENCH_BASELINE_SEC', 10);
const DAY = 86_400_000;
const round = (n: number) => Math.round(n);
const load = () => os.loadavg()[0].toFixed(1);

const OPERATORS = ['J. Alvarez', 'M. Okafor', 'S. Lindqvist', 'R. Patel', 'T. Nguyen', 'K. Schmidt'];
const REMARKS = [
  'walkaround done, no leaks found',
  'greased pins and bushings on the boom',
  'topped up hydraulic oil, level checked',
  'tracks tensioned, cab and glass cleaned',
  'idle most of the afternoon, waiting on trucks',
  'moved to the north stockpile after lunch',
];

/** The readings file, line by line to disk (never the whole text in memory); returns its path and size. */
async function writeReadings(dir: string) {
  const file = path.join(dir, 'readings.csv');
  const out = createWriteStream(file);
  const start = Date.UTC(2020, 0, 1);
  const perAsset = Math.ceil(READINGS / ASSETS);
  let rows = 0;
  out.write('customerAssetNumber,loggedAt,hoursReading,note');
  for (let d = 0; d < perAsset; d++) {
    for (let a = 1; a <= ASSETS && rows < READINGS; a++, rows++) {
      const who = OPERATORS[(a + d) % OPERATORS.length];
      const note = `Shift ${(d % 3) + 1}, site ${(a % 40) + 1}, by ${who}: ${REMARKS[(a * 7 + d) % REMARKS.length]}`;
      const line = `\r\nB-${a},${new Date(start + d * DAY).toISOString()},${(d * 8.25).toFixed(2)},"${note}"`;
      if (!out.write(line)) await once(out, 'drain');
    }
  }
  out.end();
  await once(out, 'finish');
  return { file, rows, bytes: statSync(file).size };
}

async function main() {
  requireBuild();
  const scratch = await createScratchDatabase(ADMIN_URL, NAME);
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-bench-imports-'));
  let api: Server | null = null;
  try {
    await migrate(db.sql);
    const { key } = await createBenchTenant(db, 'bench', { name: 'Bench Fleet', rateLimit: '100000000' });
    const args = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...API_ENTRY.js] : API_ENTRY.js;
    ({ server: api } = await startApi({ port: PORT, args, env: { DATABASE_URL: scratch.url } }));
    const server = api;
    const base = `http://127.0.0.1:${PORT}/api/v1`;
    const auth = { authorization: `Bearer ${key}` };
    const getJson = async (url: string) => {
      const res = await fetch(`${base}${url}`, { headers: auth });
      if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, any>>;
    };

    /** POST /imports with the file streamed from disk by node:http, as a client sends a file it reads. */
    const upload = (type: string, file: string) => {
      const boundary = 'bench-imports-boundary';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\n${type}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path.basename(file)}"\r\n` +
          'Content-Type: text/csv\r\n\r\n',
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      return new Promise<string>((resolve, reject) => {
        const req = http.request(`${base}/imports`, {
          method: 'POST',
          headers: {
            ...auth,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': head.length + statSync(file).size + tail.length,
          },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () =>
            res.statusCode === 202 ? resolve(JSON.parse(body).importId) : reject(new Error(`upload: ${body}`)),
          );
        });
        req.write(head);
        const stream = createReadStream(file, { highWaterMark: 64 * 1024 });
        stream.on('error', reject);
        stream.on('end', () => req.end(tail));
        stream.pipe(req, { end: false });
      });
    };
    const until = async (id: string, done: string[]) => {
      for (;;) {
        const imp = (await getJson(`/imports/${id}`)).import;
        if (done.includes(imp.status)) return imp;
        if (imp.status === 'failed') throw new Error(`import failed: ${imp.failureReason}`);
        await sleep(100);
      }
    };
    /** GET /assets?limit=50 one after another, 20 ms apart, until `stop()`: the latencies. */
    const listLoop = async (stop: () => boolean) => {
      const times: number[] = [];
      while (!stop()) {
        const t = performance.now();
        const res = await fetch(`${base}/assets?limit=50`, { headers: auth });
        await res.arrayBuffer();
        times.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`list: ${res.status}`);
        await sleep(20);
      }
      return times;
    };
    const run = async (type: string, file: string) => {
      let t = performance.now();
      const id = await upload(type, file);
      const validated = await until(id, ['validated']);
      const validateMs = performance.now() - t;
      t = performance.now();
      const commit = await fetch(`${base}/imports/${id}/commit`, { method: 'POST', headers: auth });
      if (commit.status !== 202) throw new Error(`commit: ${commit.status} ${await commit.text()}`);
      return { id, validated, validateMs, commitStarted: t };
    };

    // ---- 1,000 assets
    const assetFile = path.join(dir, 'assets.csv');
    const assetRows = ['customerAssetNumber,nickname,assetClass,vin,purchaseCost,pmInterval'];
    for (let i = 1; i <= 1000; i++) assetRows.push(`B-${i},Machine ${i},off-road,VIN${i},${1000 + i}.50,250`);
    const assetStream = createWriteStream(assetFile);
    assetStream.end(assetRows.join('\r\n'));
    await once(assetStream, 'finish');
    log(`load average ${load()}`);
    const assets = await run('assets', assetFile);
    await until(assets.id, ['completed']);
    const assetCommitMs = performance.now() - assets.commitStarted;
    log(`1,000 assets: validate ${round(assets.validateMs)} ms, commit ${round(assetCommitMs)} ms`);
    if (ONLY === 'assets') {
      writeResults('imports', {
        assets: { rows: 1000, validateMs: round(assets.validateMs), commitMs: round(assetCommitMs) },
      });
      return;
    }

    // ---- GET /assets on the idle server: the baseline of the same loop during the commit
    const baselineEnd = performance.now() + BASELINE_SEC * 1000;
    const baseline = await listLoop(() => performance.now() > baselineEnd);
    log(`GET /assets, server idle: p50 ${median(baseline).toFixed(1)} ms, p99 ${pct(baseline, 99).toFixed(1)} ms`);

    // ---- meter readings for BENCH_ASSETS of them, a day apart, in file order by time
    const readingsFile = await writeReadings(dir);
    log(`meter readings: ${readingsFile.rows} rows, ${(readingsFile.bytes / 2 ** 20).toFixed(1)} MB; load ${load()}`);
    const rssBefore = statusMb(server.pid, 'VmRSS');
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, statusMb(server.pid, 'VmRSS'))), 20);
    const readings = await run('meter_readings', readingsFile.file);
    const validatePeak = peak;
    log(`validate ${round(readings.validateMs)} ms, counts ${JSON.stringify(readings.validated.counts)}`);
    let committed = false;
    const done = until(readings.id, ['completed', 'partially_completed']).then(() => (committed = true));
    const listTimes = await listLoop(() => committed);
    await done;
    const readingCommitMs = performance.now() - readings.commitStarted;
    clearInterval(sampler);
    const hwm = statusMb(server.pid, 'VmHWM');
    const [written] = await db.sql.query<{ logs: number; flags: number }>(
      `SELECT (SELECT count(*) FROM meter_logs)::int AS logs,
         (SELECT count(*) FROM flags WHERE severity = 'AUTO_PM')::int AS flags`,
    );
    log(`commit ${round(readingCommitMs)} ms; server RSS ${round(rssBefore)} MB before, peak ${round(peak)} MB`);
    log(`validation peak ${round(validatePeak)} MB, VmHWM ${round(hwm)} MB; load ${load()}`);
    log(`written: ${written.logs} meter logs, ${written.flags} AUTO_PM flags`);
    log(
      `GET /assets during the commit: p50 ${median(listTimes).toFixed(1)} ms, p99 ${pct(listTimes, 99).toFixed(1)} ms`,
    );

    writeResults('imports', {
      assets: { rows: 1000, validateMs: round(assets.validateMs), commitMs: round(assetCommitMs) },
      meterReadings: {
        rows: readingsFile.rows,
        megabytes: +(readingsFile.bytes / 2 ** 20).toFixed(1),
        validateMs: round(readings.validateMs),
        commitMs: round(readingCommitMs),
        written,
        serverRssMb: {
          before: round(rssBefore),
          validationPeak: round(validatePeak),
          peak: round(peak),
          hwm: round(hwm),
        },
      },
      listAssetsIdle: { samples: baseline.length, p50Ms: median(baseline), p99Ms: pct(baseline, 99) },
      listAssetsDuringCommit: { samples: listTimes.length, p50Ms: median(listTimes), p99Ms: pct(listTimes, 99) },
    });
    await stop(api);
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
      const profile = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as CpuProfile;
      copyFileSync(path.join(dir, f), path.join(ROOT, 'bench/results', f));
      console.log(topOfProfile(profile, 30).join('\n'));
    }
  } finally {
    if (api) await stop(api);
    rmSync(dir, { recursive: true, force: true });
    await db.close();
    await scratch.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
