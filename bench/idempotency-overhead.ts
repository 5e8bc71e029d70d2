/**
 * What an Idempotency-Key costs a write: POST /api/v1/yards sequentially without a key, with a fresh key each
 * time (claim + request transaction + record), and replays of one key, alternating rounds; medians printed.
 * `npx tsx bench/idempotency-overhead.ts` (PostgreSQL at BENCH_DATABASE_URL, default the local server; set
 * BENCH_PGLITE=1 for the embedded database). Not a gate: a measurement to read.
 */
import { randomUUID } from 'node:crypto';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { createScratchDatabase } from '../test/helpers/db/scratch-database.ts';
import { BENCH_SECRETS_KEYS } from './bench-keys.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const pglite = process.env.BENCH_PGLITE === '1';
const scratch = pglite
  ? null
  : await createScratchDatabase(
      process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
      'bench_idem',
    );
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
const admin = createOrgAdmin(db);
await admin.createOrg('Bench', 'bench');
await admin.createUser('bench', 'bench@example.com', 'Bench');
const { key } = await admin.createKey({ orgSlug: 'bench', userEmail: 'bench@example.com', label: 'b', scopes: 'all' });

let n = 0;
const post = (headers: Record<string, string>, name = `Yard ${n++}`) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/yards',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ name }),
  });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
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
await app.close();
await deps.close();
await db.close();
await scratch?.drop();
