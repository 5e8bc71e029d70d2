// Benchmark of attachments on local storage or S3 (BENCH_STORAGE=s3: an s3rver in this process, outside the
// server's RSS), the API in a child process on PostgreSQL (the production entry, `node dist/main.js`: run
// `npm run build` first):
// - Ten concurrent 25 MB multipart uploads: the server's peak RSS (VmRSS sampled every 10 ms, and VmHWM).
// - One 25 MB upload (multipart, and the presigned path: declare, PUT, complete) and one 25 MB download:
//   throughput as a ratio to a plain file copy through Node streams (fs.createReadStream piped into
//   fs.createWriteStream) of the same file on the same disk, alternating rounds, the median of the per-round ratios.
// Usage: npm run bench:attachments. Env: BENCH_DATABASE_URL (admin URL; a scratch database is created and dropped),
// BENCH_ROUNDS (5), BENCH_MB (25), BENCH_CONCURRENT (10), BENCH_PORT (4390), BENCH_STORAGE (local | s3),
// BENCH_S3_PORT (BENCH_PORT + 1).
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { ADMIN_URL, log, num, sleep } from './lib/env.ts';
import { statusMb } from './lib/proc.ts';
import { writeResults } from './lib/results.ts';
import { seedFleet } from './lib/seed.ts';
import { API_ENTRY, requireBuild, ROOT, startApi, stopAll, type Server } from './lib/server.ts';
import { median, round, roundRatios, timed } from './lib/stats.ts';

requireBuild(ROOT);

/** An s3rver (as in test/helpers/app/s3rver.ts) with one bucket, in this process, and the server's env for it. */
async function startBucket(port: number) {
  const directory = mkdtempSync(path.join(tmpdir(), 'fleet-bench-s3rver-'));
  const server = new S3rver({
    port,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: 'bench' }],
  });
  await server.run();
  return {
    env: {
      ATTACHMENTS_STORAGE: 's3',
      S3_BUCKET: 'bench',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_FORCE_PATH_STYLE: 'true',
      S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

const ROUNDS = num('BENCH_ROUNDS', 5);
const MB = num('BENCH_MB', 25);
const CONCURRENT = num('BENCH_CONCURRENT', 10);
const PORT = num('BENCH_PORT', 4390);
const STORAGE = process.env.BENCH_STORAGE === 's3' ? 's3' : 'local';
const BYTES = MB * 1_000_000;
const base = `http://127.0.0.1:${PORT}/api/v1`;

const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-attachments-'));
const source = path.join(dir, 'source.pdf');
// A PDF signature, then random bytes: accepted, and nothing for the disk or the network to compress.
writeFileSync(source, Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(BYTES - 9)]));

const scratch = await createScratchDatabase(ADMIN_URL, 'fleet_bench_attachments');
const servers: Server[] = [];
let bucket: { env: Record<string, string>; close(): Promise<void> } | undefined;
try {
  if (STORAGE === 's3') bucket = await startBucket(num('BENCH_S3_PORT', PORT + 1));
  const tenant = await seedFleet({ databaseUrl: scratch.url, dataDir: 'unused' }, 1);
  const auth = { authorization: `Bearer ${tenant.key}` };
  const { server } = await startApi({
    port: PORT,
    args: API_ENTRY.js,
    env: {
      DATABASE_URL: scratch.url,
      ATTACHMENTS_DIR: path.join(dir, 'store'),
      ATTACHMENT_MAX_BYTES: String(BYTES + 1024),
      REQUEST_TIMEOUT_MS: '120000',
      ...bucket?.env,
    },
  });
  servers.push(server);

  /** The multipart body streamed from the file by node:http, as a client on another machine would send it. */
  function upload(): Promise<string> {
    const boundary = `bench${randomBytes(8).toString('hex')}`;
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const head =
      field('subjectType', 'asset') +
      field('subjectId', 'bench-asset-0') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="manual.pdf"\r\n` +
      'Content-Type: application/pdf\r\n\r\n';
    const tail = `\r\n--${boundary}--\r\n`;
    return new Promise((resolve, reject) => {
      const req = http.request(`${base}/attachments`, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': Buffer.byteLength(head) + BYTES + Buffer.byteLength(tail),
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => {
          const body = JSON.parse(text) as { attachmentId?: string };
          if (res.statusCode !== 201 || !body.attachmentId) reject(new Error(`upload: ${res.statusCode} ${text}`));
          else resolve(body.attachmentId);
        });
      });
      req.write(head);
      const file = createReadStream(source, { highWaterMark: 256 * 1024 });
      file.on('error', reject);
      file.on('end', () => req.end(tail));
      file.pipe(req, { end: false });
    });
  }
  /** The large-file path: declare, PUT the bytes to the signed upload URL (no API key), complete. */
  async function presignedUpload(): Promise<string> {
    const declared = await fetch(`${base}/attachments/uploads`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        subjectType: 'asset',
        subjectId: 'bench-asset-0',
        filename: 'manual.pdf',
        contentType: 'application/pdf',
        size: BYTES,
      }),
    });
    const { attachmentId, upload: target } = (await declared.json()) as {
      attachmentId: string;
      upload: { url: string; headers: Record<string, string> };
    };
    if (declared.status !== 201) throw new Error(`declare: ${declared.status}`);
    await new Promise<void>((resolve, reject) => {
      const req = http.request(target.url, { method: 'PUT', headers: { ...target.headers, 'content-length': BYTES } });
      req.on('error', reject);
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => (res.statusCode! < 300 ? resolve() : reject(new Error(`PUT: ${res.statusCode}`))));
      });
      const file = createReadStream(source, { highWaterMark: 256 * 1024 });
      file.on('error', reject);
      file.pipe(req);
    });
    const done = await fetch(`${base}/attachments/${attachmentId}/complete`, { method: 'POST', headers: auth });
    if (done.status !== 200) throw new Error(`complete: ${done.status} ${await done.text()}`);
    return attachmentId;
  }
  async function download(id: string, to: string) {
    const res = await fetch(`${base}/attachments/${id}/content`, { headers: auth });
    if (res.status !== 200 || !res.body) throw new Error(`download: ${res.status}`);
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(to));
  }
  const copy = (to: string) => pipeline(createReadStream(source), createWriteStream(to));

  await upload(); // warm-up: module loading, the first thumbnail-free path through the code
  log(`${CONCURRENT} concurrent ${MB} MB uploads`);
  const rssBefore = statusMb(server.pid, 'VmRSS');
  let peak = rssBefore;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, statusMb(server.pid, 'VmRSS'));
      await sleep(10);
    }
  })();
  const concurrentMs = await timed(() => Promise.all(Array.from({ length: CONCURRENT }, upload)));
  sampling = false;
  await sampler;
  const hwm = statusMb(server.pid, 'VmHWM');

  log(`throughput: ${ROUNDS} alternating rounds`);
  const up: number[] = [];
  const put: number[] = [];
  const down: number[] = [];
  const copies: number[] = [];
  let last = '';
  for (let r = 0; r < ROUNDS; r++) {
    copies.push(await timed(() => copy(path.join(dir, 'copy.bin'))));
    up.push(await timed(async () => (last = await upload())));
    put.push(await timed(presignedUpload));
    down.push(await timed(() => download(last, path.join(dir, 'download.bin'))));
  }
  // Throughput ratio = copy time / API time (1.0 = as fast as a plain stream copy).
  const upRatio = roundRatios(copies, up);
  const putRatio = roundRatios(copies, put);
  const downRatio = roundRatios(copies, down);
  const mbps = (msList: number[]) => round(MB / (median(msList) / 1000), 1);
  const results = {
    storage: STORAGE,
    concurrentUploads: {
      count: CONCURRENT,
      mb: MB,
      wallMs: Math.round(concurrentMs),
      rssBeforeMb: round(rssBefore, 1),
      rssGrowthMb: round(peak - rssBefore, 1),
      rssPeakMb: round(peak, 1),
      vmHwmMb: round(hwm, 1),
    },
    throughput: {
      copyMBps: mbps(copies),
      uploadMBps: mbps(up),
      downloadMBps: mbps(down),
      presignedMBps: mbps(put),
      uploadRatio: round(upRatio.median),
      presignedRatio: round(putRatio.median),
      downloadRatio: round(downRatio.median),
      uploadRounds: upRatio.rounds.map((x) => round(x)),
      presignedRounds: putRatio.rounds.map((x) => round(x)),
      downloadRounds: downRatio.rounds.map((x) => round(x)),
    },
  };
  console.table({
    [`${CONCURRENT} x ${MB} MB concurrent`]: {
      'RSS before MB': results.concurrentUploads.rssBeforeMb,
      'RSS peak MB': results.concurrentUploads.rssPeakMb,
      'VmHWM MB': results.concurrentUploads.vmHwmMb,
    },
  });
  console.table({
    'file copy (streams)': { 'MB/s': results.throughput.copyMBps, 'ratio to copy': 1 },
    'upload (multipart)': { 'MB/s': results.throughput.uploadMBps, 'ratio to copy': results.throughput.uploadRatio },
    'upload (presigned PUT + complete)': {
      'MB/s': results.throughput.presignedMBps,
      'ratio to copy': results.throughput.presignedRatio,
    },
    'download (content)': {
      'MB/s': results.throughput.downloadMBps,
      'ratio to copy': results.throughput.downloadRatio,
    },
  });
  log(`results: ${writeResults(STORAGE === 's3' ? 'attachments-s3' : 'attachments', results)}`);
} finally {
  await stopAll(servers);
  await bucket?.close();
  await scratch.drop();
  rmSync(dir, { recursive: true, force: true });
}
