// What runs against a database while bench/partitions.ts converts it: the previous release's writes every 10 ms,
// the previous release's server answering its smoke again and again (scripts/previous-release-smoke.mjs), and a
// watch over every other session's lock waits.
import { spawn } from 'node:child_process';
import pg from 'pg';
import type { Database } from '../../src/db/database.ts';
import { log, sleep } from './env.ts';
import { ROOT } from './server.ts';
import { round } from './stats.ts';

/** The previous release's writes every 10 ms on the API's pool settings: the longest one and the failures. */
export function startWriter(db: Database) {
  let stopped = false;
  let n = 0;
  let errors = 0;
  let worstMs = 0;
  const done = (async () => {
    while (!stopped) {
      n++;
      const t = performance.now();
      try {
        await db.sql.exec(
          `WITH e AS (INSERT INTO events (id, "orgId", type, data) VALUES ('w-e${n}', 'org1', 'asset.created', '{}') RETURNING id, type)
           INSERT INTO webhook_deliveries (id, "orgId", "subscriptionId", "eventId", "eventType")
           SELECT 'w-d${n}', 'org1', 'sub1', id, type FROM e;
           INSERT INTO meter_logs (id, "orgId", "assetId", "hoursReading", delta, "loggedAt", "clientMutationId")
           VALUES ('w-m${n}', 'org1', 'a1', ${1e7 + n}, 1, now(), 'w-k${n}')`,
        );
      } catch (err) {
        errors++;
        log(`write failed: ${(err as Error).message}`);
      }
      worstMs = Math.max(worstMs, performance.now() - t);
      await sleep(10);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { writes: n, errors, worstMs: round(worstMs, 1) };
    },
  };
}

/**
 * Every 50 ms, the sessions of the database waiting for a lock (but the conversion's own, `exclude()`): the longest
 * wait seen (since its statement started, so an upper bound) and the statement that waited.
 */
export function startLockWatch(url: string, exclude: () => number[]) {
  const c = new pg.Client({ connectionString: url });
  let stopped = false;
  let longestMs = 0;
  let statement = '';
  const done = (async () => {
    await c.connect();
    while (!stopped) {
      const { rows } = await c.query<{ ms: number; query: string }>(
        `SELECT (extract(epoch FROM clock_timestamp() - query_start) * 1000)::float8 AS ms, left(query, 100) AS query
         FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> ALL($1::int[])
         ORDER BY 1 DESC LIMIT 1`,
        [exclude()],
      );
      if (rows[0] && rows[0].ms > longestMs) [longestMs, statement] = [rows[0].ms, rows[0].query];
      await sleep(50);
    }
    await c.end();
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { longestLockWaitMs: round(longestMs, 0), statement };
    },
  };
}

export interface PreviousReleaseResult {
  passes: number;
  failed: number;
  slowestMs: number;
  failures: string[];
  exitCode: number | null;
}

/**
 * The previous release's server on `url`, its smoke repeated from the first pass (awaited here, setup included)
 * until stop(). Its output goes to stderr with a prefix.
 */
export async function startPreviousRelease(url: string, port: number) {
  const child = spawn(process.execPath, ['scripts/previous-release-smoke.mjs'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      N1_DATABASE_URL: url,
      N1_LOOP: '1',
      N1_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: given up on, the script and the server it started go together.
    detached: true,
  });
  const killAll = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let out = '';
  let summary: Omit<PreviousReleaseResult, 'exitCode'> | null = null;
  child.stderr.on('data', (d) => process.stderr.write(`[N-1] ${d}`));
  child.stdout.on('data', (d: Buffer) => {
    out += d;
    const m = /N-1 loop: (\{.*\})/.exec(out);
    if (m) summary = JSON.parse(m[1]);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const t = performance.now();
  while (!out.includes('N-1 smoke passed')) {
    if (child.exitCode !== null || performance.now() - t > 300_000) {
      killAll();
      throw new Error(`the N-1 smoke did not pass once (exit ${child.exitCode}): ${out.slice(-2000)}`);
    }
    await sleep(100);
  }
  log('N-1: the previous release serves its smoke on the database');
  return {
    async stop(): Promise<PreviousReleaseResult> {
      child.kill('SIGUSR2');
      const code = await Promise.race([exited, sleep(120_000).then(() => 'timeout' as const)]);
      if (code === 'timeout') {
        killAll();
        throw new Error('the N-1 smoke did not stop within 120 s');
      }
      if (!summary) throw new Error(`the N-1 smoke printed no summary (exit ${code}): ${out.slice(-2000)}`);
      return { ...(summary as Omit<PreviousReleaseResult, 'exitCode'>), exitCode: code };
    },
  };
}
