// bench/scale.ts's writes: POST /hours against the same transaction hand-written on pg, and POST /work-orders
// at 10 concurrent in one organisation against the same create spread over ten and GET /health (same run).
// What they add is removed at the end, so every run measures the seeded volumes.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { concurrent, type Call, type Stats } from '../http-client.ts';
import { median, ms as f, round, timed } from '../stats.ts';
import { createSpreadOrgs, removeBenchWrites, type ScaleDatabase } from './db.ts';

export async function measureWrites(
  call: Call,
  pool: pg.Pool,
  scale: ScaleDatabase,
  id: (kind: string, n: number) => Promise<string>,
  o: { rounds: number; samples: number },
) {
  const [ROUNDS, SAMPLES] = [o.rounds, o.samples];
  const org = scale.orgId;
  // Writes: POST /hours against the same transaction hand-written on pg; POST /work-orders at 10 concurrent.
  const hourAssets = await Promise.all(Array.from({ length: 20 }, (_, i) => id('a', 50_000 + i)));
  // Above every reading an earlier run left, so each POST /hours is a plain forward reading (not one for review).
  const { rows: last } = await pool.query(
    `SELECT coalesce(max("lastMeterReading"), 0)::float8 AS r FROM assets WHERE id = ANY($1)`,
    [hourAssets],
  );
  let reading = Math.max(100_000, Math.ceil(last[0].r) + 1);
  // What the writes add is removed afterwards (below), so every run measures the seeded volumes.
  const { rows: seqBefore } = await pool.query(`SELECT "workOrderSeq" AS n FROM organizations WHERE id = $1`, [org]);
  const writesStarted = new Date();
  const postHours = () =>
    call('/hours', {
      method: 'POST',
      body: JSON.stringify({
        assetId: hourAssets[reading % 20],
        hoursReading: ++reading,
        note: 'bench (concurrent readings may arrive out of order)',
      }),
    });
  const rawHours = async () => {
    const c = await pool.connect();
    try {
      const assetId = hourAssets[reading % 20];
      await c.query('BEGIN');
      await c.query(`SELECT * FROM assets WHERE id = $1 AND "orgId" = $2 FOR UPDATE`, [assetId, org]);
      const logId = randomUUID();
      await c.query(
        `INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt") VALUES ($1, $2, $3, $4, 1, now())`,
        [logId, org, assetId, ++reading],
      );
      await c.query(`UPDATE assets SET "lastMeterReading" = $2, "lastMeterAt" = now() WHERE id = $1`, [
        assetId,
        reading,
      ]);
      await c.query(`INSERT INTO events (id, "orgId", type, data) VALUES ($1, $2, 'hours.logged', '{}')`, [
        randomUUID(),
        org,
      ]);
      await c.query('COMMIT');
    } finally {
      c.release();
    }
  };
  // Warm-up as every read endpoint gets (JIT, pool connections), so round 1 does not measure start-up.
  await concurrent(postHours, 50);
  await concurrent(rawHours, 50);
  const postWorkOrder = () => call('/work-orders', { method: 'POST', body: JSON.stringify({ title: 'bench' }) });
  await concurrent(postWorkOrder, 50);
  const writeRuns = { api: [] as number[], raw: [] as number[], hours: [] as Stats[] };
  for (let r = 0; r < ROUNDS; r++) {
    const n = SAMPLES * 2;
    let stats: Stats | undefined;
    writeRuns.api.push(n / ((await timed(async () => (stats = await concurrent(postHours, n)))) / 1000));
    writeRuns.hours.push(stats!);
    writeRuns.raw.push(n / ((await timed(() => concurrent(rawHours, n))) / 1000));
  }
  // p99 of 120 requests is their second slowest: the work orders get 600 per round so the tail is a percentile.
  // Beside them, in alternating rounds, the same create spread over ten organisations (the same statement with no
  // lock shared by the requests) and GET /health: what this machine's tail is without the number lock.
  const spreadKeys = await createSpreadOrgs(scale.url, 10);
  let spreadTurn = 0;
  const postSpread = () =>
    call('/work-orders', {
      method: 'POST',
      body: JSON.stringify({ title: 'bench' }),
      key: spreadKeys[spreadTurn++ % spreadKeys.length],
    });
  const health = () => call('/health');
  await concurrent(postSpread, 50);
  const woN = Math.max(600, SAMPLES * 2);
  const woRuns: Stats[] = [];
  const spreadRuns: Stats[] = [];
  const healthRuns: Stats[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    woRuns.push(await concurrent(postWorkOrder, woN));
    spreadRuns.push(await concurrent(postSpread, woN));
    healthRuns.push(await concurrent(health, woN));
  }
  const { rows: gaps } = await pool.query(
    `SELECT count(*)::int AS n, max(number) - min(number) + 1 AS span FROM work_orders WHERE "orgId" = $1`,
    [org],
  );

  const apiW = median(writeRuns.api);
  const rawW = median(writeRuns.raw);
  console.log(
    `POST /hours at 10 concurrent: ${apiW.toFixed(0)}/s; the same transaction on raw pg ${rawW.toFixed(0)}/s: ${(apiW / rawW).toFixed(2)}x`,
  );
  const tail = (runs: Stats[]) => {
    const p50 = median(runs.map((x) => x.p50));
    const p99 = median(runs.map((x) => x.p99));
    return { p50Ms: round(p50, 2), p99Ms: round(p99, 2), p99OverP50: round(p99 / p50, 2) };
  };
  const spread = (runs: Stats[]) => {
    const t = tail(runs);
    return `p50 ${f(t.p50Ms)}, p99 ${f(t.p99Ms)} (p99/p50 ${t.p99OverP50.toFixed(2)})`;
  };
  console.log(
    `POST /work-orders at 10 concurrent, one organisation: ${spread(woRuns)}; numbers ${gaps[0].n} over a span of ${gaps[0].span} (gap-free: ${gaps[0].n === Number(gaps[0].span)})`,
  );
  console.log(`  same run, the same create over 10 organisations (no shared lock): ${spread(spreadRuns)}`);
  console.log(`  same run, GET /health: ${spread(healthRuns)}`);
  console.log(`  same run, POST /hours on 20 assets: ${spread(writeRuns.hours)}`);
  await removeBenchWrites(pool, org, seqBefore[0].n, writesStarted, spreadKeys.length);
  return {
    postHours: { apiPerSecond: round(apiW, 0), rawPerSecond: round(rawW, 0), ratio: round(apiW / rawW, 2) },
    postWorkOrders: {
      oneOrganisation: tail(woRuns),
      spreadOverTen: tail(spreadRuns),
      health: tail(healthRuns),
      postHoursTail: tail(writeRuns.hours),
      numbers: gaps[0].n,
      span: Number(gaps[0].span),
    },
  };
}
