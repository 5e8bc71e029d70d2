/**
 * What an Idempotency-Key costs a write: POST /api/v1/yards sequentially without a key, with a fresh key each
 * time (claim + request transaction + record), and replays of one key, alternating rounds; medians printed.
 * `npm run bench:idempotency` (PostgreSQL at BENCH_DATABASE_URL, default the local server; set BENCH_PGLITE=1 for
 * the embedded database; BENCH_REQUESTS (300) per measurement, BENCH_ROUNDS (3)). Not a gate: a measurement to read.
 */
import { randomUUID } from 'node:crypto';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { ADMIN_URL, flag, num } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { createBenchTenant } from './lib/seed.ts';
import { median, round } from './lib/stats.ts';

const N = num('BENCH_REQUESTS', 300);
const ROUNDS = num('BENCH_ROUNDS', 3);
const pglite = flag('BENCH_PGLITE');
const scratch = pglite ? null : await createScratchDatabase(ADMIN_URL, 'bench_idem');
const db = await openDatabase({ databaseUrl: scratch?.url, dataDir: 'memory://' });
await migrate(db.sql);
const config = loadConfig({
  LOG_LEVEL: 'silent',
  RATE_LIMIT_PER_MINUTE: '1000000',
  ...(scratch ? { DATABASE_URL: scratch.url, SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS } : {}),
});
const deps = createDeps(config, db);
const app = await buildApp(deps);
await app.ready();
const { key } = await createBenchTenant(db);

let n = 0;
const post = (headers: Record<string, string>, name = `Yard ${n++}`) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/yards',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ name }),
  });
async function run(kind: 'plain' | 'keyed' | 'replay'): Promise<number> {
  const replayKey = randomUUID();
  if (kind === 'replay') await post({ 'idempotency-key': replayKey }, `Replayed ${replayKey}`);
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const res =
      kind === 'plain'
        ? await post({})
        : kind === 'keyed'
          ? await post({ 'idempotency-key': randomUUID() })
          : await post({ 'idempotency-key': replayKey }, `Replayed ${replayKey}`);
    times.push(performance.now() - t0);
    if (res.statusCode !== 201) throw new Error(`${kind}: ${res.statusCode} ${res.body}`);
  }
  return median(times);
}
const results: Record<string, number[]> = { plain: [], keyed: [], replay: [] };
for (let r = 0; r < ROUNDS; r++)
  for (const kind of ['plain', 'keyed', 'replay'] as const) results[kind].push(await run(kind));
const plain = median(results.plain);
for (const [kind, xs] of Object.entries(results))
  console.log(
    `${kind.padEnd(7)} p50 ${median(xs).toFixed(2)} ms  (${(median(xs) / plain).toFixed(2)}x plain; rounds ${xs.map((x) => x.toFixed(2)).join(', ')})`,
  );
writeResults('idempotency-overhead', {
  database: pglite ? 'pglite' : 'postgresql',
  requests: N,
  rounds: ROUNDS,
  p50Ms: Object.fromEntries(Object.entries(results).map(([kind, xs]) => [kind, round(median(xs), 2)])),
  vsPlain: Object.fromEntries(Object.entries(results).map(([kind, xs]) => [kind, round(median(xs) / plain, 2)])),
});
await app.close();
await deps.close();
await db.close();
await scratch?.drop();
