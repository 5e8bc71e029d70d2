// Benchmark of service programs on PostgreSQL: 100,000 assets with 5 reminders each (500,000).
// - GET /service-reminders?status=DUE_SOON,OVERDUE: p50 of the first page and of a deep page (cursor 1,000 pages in).
// - POST /hours on an asset with 10 reminders against one with none: requests per second, alternating rounds,
//   compared by the median of the rounds (same run, same process).
// - The calendar sweep over the 500,000: one tick (EXPLAIN of its one claim query, and its time for a batch).
// Usage: npm run bench:reminders. Env: BENCH_DATABASE_URL (admin URL, default postgresql://postgres@127.0.0.1:5432/
// postgres), BENCH_DB (database created for the run and dropped after, default fleet_bench_reminders), BENCH_ROUNDS
// (5), BENCH_SAMPLES (200), BENCH_ASSETS (100000), BENCH_DEPTH (1000 pages). Requests go through app.inject (in
// process, no network), both sides alike.
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrator.ts';
import { createOrgAdmin } from '../src/modules/orgs/orgs.service.ts';
import { SWEEP_CLAIM_SQL } from '../src/modules/service-reminders/service-reminder-sweep.job.ts';
import { listReminders, reminderCursor } from '../src/modules/service-reminders/service-reminders.repository.ts';
import { ListRemindersQuery } from '../src/modules/service-reminders/service-reminders.schemas.ts';
import type { SqlRunner } from '../src/db/database.ts';
import { ADMIN_URL, log, num, text } from './lib/env.ts';
import { BENCH_SECRETS_KEYS } from './lib/keys.ts';
import { writeResults } from './lib/results.ts';
import { median, pct, round } from './lib/stats.ts';

const NAME = text('BENCH_DB', 'fleet_bench_reminders');
const ROUNDS = num('BENCH_ROUNDS', 5);
const SAMPLES = num('BENCH_SAMPLES', 200);
const ASSETS = num('BENCH_ASSETS', 100_000);
const DEPTH = num('BENCH_DEPTH', 1000);
const deepLabel = `urgent, page ${(DEPTH + 1).toLocaleString('en')}`;
const url = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${NAME}`;
  return u.toString();
})();

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** 100,000 assets, 5 tasks, 5 reminders per asset with a realistic spread of statuses and due instants. */
async function seed(orgId: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('SET synchronous_commit = off');
    await c.query(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "lastMeterReading", "lastMeterAt")
      SELECT 'ba-' || g, $1, 'Machine ' || g, 'off-road', 'HOURS', 'hrs', 1000, now() - interval '400 days'
      FROM generate_series(1, ${ASSETS}) g`,
      [orgId],
    );
    await c.query(
      `INSERT INTO service_tasks (id, "orgId", name) SELECT 'bt-' || k, $1, 'Task ' || k FROM generate_series(1, 5) k`,
      [orgId],
    );
    // 5% OVERDUE, 10% DUE_SOON, 1% SNOOZED, the rest OK (a fixed scatter: an uncorrelated random() runs once); due
    // instants spread over +-200 days; a calendar check per reminder in the next year (2,000 already due, for the
    // sweep); meter alerts above the current reading.
    await c.query(
      `INSERT INTO service_reminders (id, "orgId", "assetId", "serviceTaskId", "meterInterval", "dayInterval",
        "lastCompletedReading", "lastCompletedAt", "nextDueReading", "nextDueAt", status, "statusRank", "dueKey",
        "meterStatus", "meterAlertAt", "nextCheckAt")
      SELECT 'br-' || g || '-' || k, $1, 'ba-' || g, 'bt-' || k, 250 * k, 90 * k, 900, now() - interval '30 days',
        900 + 250 * k, now() + (90 * k - 30) * interval '1 day', s.status::"ServiceReminderStatus", s.rank,
        now() + (random() * 400 - 200) * interval '1 day', 'OK', 1000 + 250 * k,
        CASE WHEN g <= 400 THEN now() - random() * interval '1 hour' ELSE now() + random() * interval '365 days' END
      FROM generate_series(1, ${ASSETS}) g CROSS JOIN generate_series(1, 5) k
      CROSS JOIN LATERAL (SELECT ((g * 7919 + k * 104729) % 1000) / 1000.0 AS r) x
      CROSS JOIN LATERAL (SELECT CASE WHEN x.r < 0.05 THEN 'OVERDUE' WHEN x.r < 0.15 THEN 'DUE_SOON'
        WHEN x.r < 0.16 THEN 'SNOOZED' ELSE 'OK' END AS status,
        CASE WHEN x.r < 0.05 THEN 0 WHEN x.r < 0.15 THEN 1 WHEN x.r < 0.16 THEN 3 ELSE 2 END AS rank) s`,
      [orgId],
    );
    // The POST /hours pair: one asset with no reminder, one with 10 whose alerts are far above its readings.
    await c.query(
      `INSERT INTO assets (id, "orgId", nickname, "assetClass", "meterType", "meterUnit", "lastMeterReading", "lastMeterAt")
      VALUES ('hours-none', $1, 'No reminders', 'off-road', 'HOURS', 'hrs', 0, now() - interval '300 days'),
             ('hours-ten', $1, 'Ten reminders', 'off-road', 'HOURS', 'hrs', 0, now() - interval '300 days')`,
      [orgId],
    );
    await c.query(
      `INSERT INTO service_reminders (id, "orgId", "assetId", "serviceTaskId", "meterInterval", "lastCompletedReading",
        "nextDueReading", status, "statusRank", "dueKey", "meterStatus", "meterAlertAt")
      SELECT 'hr-' || k, $1, 'hours-ten', 'bt-1', 100000 + k, 0, 100000 + k, 'OK', 2, now() + interval '300 days', 'OK', 90000 + k
      FROM generate_series(1, 10) k`,
      [orgId],
    );
    log('VACUUM ANALYZE');
    await c.query('VACUUM ANALYZE');
  } finally {
    await c.end();
  }
}

async function main() {
  await admin(`DROP DATABASE IF EXISTS "${NAME}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${NAME}"`);
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused' });
  try {
    await migrate(db.sql);
    const orgs = createOrgAdmin(db);
    const org = await orgs.createOrg('Bench Fleet', 'bench');
    await orgs.createUser('bench', 'bench@example.com', 'Bench');
    const { key } = await orgs.createKey({
      orgSlug: 'bench',
      userEmail: 'bench@example.com',
      label: 'b',
      rateLimit: '100000000',
    });
    log(`seeding ${ASSETS} assets x 5 reminders`);
    await seed(org.id);

    const config = loadConfig({
      DATABASE_URL: url,
      SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS,
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'error',
    });
    const logger = pino({ level: 'error' }) as unknown as FastifyBaseLogger;
    const deps = createDeps(config, db, logger);
    const app = await buildApp(deps);
    const auth = { authorization: `Bearer ${key}` };
    const get = async (path: string) => {
      const res = await app.inject({ method: 'GET', url: path, headers: auth });
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
      return res.json() as { serviceReminders: unknown[]; nextCursor: string | null };
    };
    const timeGet = async (path: string) => {
      const xs: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t = performance.now();
        await get(path);
        xs.push(performance.now() - t);
      }
      return { p50: median(xs), p99: pct(xs, 99) };
    };

    const urgent = '/api/v1/service-reminders?status=DUE_SOON,OVERDUE&limit=50';
    let cursor: string | null = null;
    let rows = 0;
    for (let page = 0; page < DEPTH; page++) {
      const body = await get(`${urgent}${cursor ? `&cursor=${cursor}` : ''}`);
      rows += body.serviceReminders.length;
      cursor = body.nextCursor;
      if (!cursor) throw new Error(`the list ended after ${page + 1} pages (${rows} rows)`);
    }
    const results: Record<string, unknown> = {};
    const http: Record<string, { p50Ms: number; p99Ms: number }> = {};
    const sql: Record<string, { p50Ms: number; indexes: string }> = {};
    for (const [label, path] of [
      ['urgent, first page', urgent],
      [deepLabel, `${urgent}&cursor=${cursor}`],
      ['every status, first page', '/api/v1/service-reminders?limit=50'],
    ] as const) {
      const s = await timeGet(path);
      http[label] = { p50Ms: round(s.p50, 2), p99Ms: round(s.p99, 2) };
      log(`GET ${label}: p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`);
    }

    // The statement alone, as PostgreSQL runs it (EXPLAIN ANALYZE through the repository's own SQL).
    const deep = reminderCursor(cursor!);
    for (const [label, after] of [
      ['urgent, first page', null],
      [deepLabel, deep],
    ] as const) {
      const times: number[] = [];
      let indexes = '';
      for (let i = 0; i < 50; i++) {
        const explaining: SqlRunner = {
          ...db.sql,
          query: async <T>(text: string, params: unknown[] = []) => {
            const [row] = await db.sql.query<{ 'QUERY PLAN': unknown }>(
              `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
              params,
            );
            const raw = row['QUERY PLAN'];
            const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { 'Execution Time': number }[];
            times.push(plan['Execution Time']);
            indexes = [...new Set(JSON.stringify(plan).match(/service_reminders_\w+_idx/g))].join(', ');
            return [] as T[];
          },
        };
        await listReminders(explaining, org.id, ListRemindersQuery.parse({ status: 'DUE_SOON,OVERDUE' }), after);
      }
      sql[label] = { p50Ms: round(median(times), 2), indexes };
      log(`SQL ${label}: p50 ${median(times).toFixed(2)} ms in PostgreSQL (${indexes})`);
    }

    // POST /hours: alternating rounds, each reading one hour after the previous one and half an hour higher.
    const reading = { 'hours-none': 0, 'hours-ten': 0 } as Record<string, number>;
    const start = Date.now() - 290 * 86_400_000;
    const post = async (assetId: string) => {
      const n = ++reading[assetId];
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/hours',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: JSON.stringify({
          assetId,
          hoursReading: n / 2,
          loggedAt: new Date(start + n * 3_600_000).toISOString(),
        }),
      });
      if (res.statusCode !== 201 || res.json().reviewStatus !== 'NONE') throw new Error(`POST /hours ${res.body}`);
    };
    for (let i = 0; i < 50; i++) await Promise.all([post('hours-none'), post('hours-ten')]);
    const rate: Record<string, number[]> = { 'hours-none': [], 'hours-ten': [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const assetId of round % 2 ? ['hours-ten', 'hours-none'] : ['hours-none', 'hours-ten']) {
        const t = performance.now();
        for (let i = 0; i < SAMPLES; i++) await post(assetId);
        rate[assetId].push(SAMPLES / ((performance.now() - t) / 1000));
      }
    }
    const none = median(rate['hours-none']);
    const ten = median(rate['hours-ten']);
    log(
      `POST /hours: no reminders ${none.toFixed(0)}/s, 10 reminders ${ten.toFixed(0)}/s, ratio ${(ten / none).toFixed(3)}`,
    );

    const [plan] = await db.sql.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON, ANALYZE) ${SWEEP_CLAIM_SQL.replace(' FOR UPDATE SKIP LOCKED', '')}`,
      [new Date(), 500],
    );
    const planText = JSON.stringify(plan['QUERY PLAN']);
    log(
      `sweep claim plan: ${/service_reminders_calendar_idx/.test(planText) ? 'Index Scan service_reminders_calendar_idx' : planText}`,
    );
    const t = performance.now();
    const swept = await deps.services.serviceReminders.sweep(new Date());
    const sweepMs = performance.now() - t;
    log(
      `sweep tick: ${swept} reminders re-evaluated in ${sweepMs.toFixed(0)} ms (of ${(ASSETS * 5).toLocaleString('en')})`,
    );
    Object.assign(results, {
      assets: ASSETS,
      reminders: ASSETS * 5,
      samples: SAMPLES,
      rounds: ROUNDS,
      http,
      sql,
      postHoursPerSecond: { noReminders: round(none, 0), tenReminders: round(ten, 0), ratio: round(ten / none, 3) },
      sweep: {
        claimUsesCalendarIndex: /service_reminders_calendar_idx/.test(planText),
        swept,
        ms: Math.round(sweepMs),
      },
    });
    writeResults('service-reminders', results);
    await app.close();
  } finally {
    await db.close().catch(() => {});
    await admin(`DROP DATABASE IF EXISTS "${NAME}" WITH (FORCE)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
