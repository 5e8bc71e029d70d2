// bench/replicas.ts's traffic: many organisations, each with several keys, sending a mix of reads (lists, details,
// a cost report, the event feed) and writes (readings, flags, renames, work orders) to any of the API processes,
// as an integration relaying many tenants does; and the counts of where reads ran, from the API and from PostgreSQL.
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { seededIdLocal } from './scale/seed.ts';

export interface MixOrg {
  tag: string;
  keys: string[];
  assets: number;
}

type Req = { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: unknown };

/** Readings only grow: one counter for every asset keeps each asset's next reading above its last. */
let reading = 1_000_000;
let n = 0;

const READS: [weight: number, make: (asset: string) => Req][] = [
  [2, () => ({ method: 'GET', path: '/assets?limit=50' })],
  [3, (a) => ({ method: 'GET', path: `/assets/${a}` })],
  [2, (a) => ({ method: 'GET', path: `/hours?assetId=${a}&limit=50` })],
  [1, () => ({ method: 'GET', path: '/work-orders?limit=50' })],
  [1, () => ({ method: 'GET', path: '/flags?limit=50' })],
  [1, () => ({ method: 'GET', path: '/events?limit=50' })],
  [1, (a) => ({ method: 'GET', path: `/assets/${a}/costs` })],
  [1, () => ({ method: 'GET', path: '/tools?limit=50' })],
];
const WRITES: [weight: number, make: (asset: string) => Req][] = [
  [2, (a) => ({ method: 'POST', path: '/hours', body: { assetId: a, hoursReading: (reading += 1) } })],
  [1, (a) => ({ method: 'POST', path: '/flags', body: { assetId: a, severity: 'YELLOW' } })],
  [1, (a) => ({ method: 'PATCH', path: `/assets/${a}`, body: { nickname: `Unit renamed ${n++}` } })],
  [1, (a) => ({ method: 'POST', path: '/work-orders', body: { title: `Check ${n++}`, assetId: a, priority: 'LOW' } })],
];

const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
function weighted(table: [number, (asset: string) => Req][], asset: string): Req {
  let r = Math.random() * table.reduce((s, [w]) => s + w, 0);
  for (const [w, make] of table) if ((r -= w) < 0) return make(asset);
  return table[0][1](asset);
}

export interface MixResult {
  reads: number;
  writes: number;
  failed: number;
  firstFailure: string | null;
  seconds: number;
}

/**
 * `workers` closed loops for `seconds`: each request names a random organisation (one of its keys), a random asset of
 * it and a random API process; `writePercent` of them write. Statuses of 400 and more count as failed.
 */
export async function runMix(
  ports: number[],
  orgs: MixOrg[],
  o: { workers: number; seconds: number; writePercent: number },
): Promise<MixResult> {
  const pools = ports.map((p) => new HttpPool(`http://127.0.0.1:${p}`, { connections: o.workers, pipelining: 1 }));
  const result: MixResult = { reads: 0, writes: 0, failed: 0, firstFailure: null, seconds: o.seconds };
  const until = performance.now() + o.seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: o.workers }, async () => {
        while (performance.now() < until) {
          const org = pick(orgs);
          const asset = seededIdLocal(org.tag, 'a', 1 + Math.floor(Math.random() * org.assets));
          const write = Math.random() * 100 < o.writePercent;
          const req = weighted(write ? WRITES : READS, asset);
          const res = await pick(pools).request({
            path: `/api/v1${req.path}`,
            method: req.method,
            headers: { authorization: `Bearer ${pick(org.keys)}`, 'content-type': 'application/json' },
            body: req.body === undefined ? undefined : JSON.stringify(req.body),
          });
          const text = await res.body.text();
          if (write) result.writes++;
          else result.reads++;
          if (res.statusCode >= 400) {
            result.failed++;
            result.firstFailure ??= `${req.method} ${req.path}: ${res.statusCode} ${text.slice(0, 200)}`;
          }
        }
      }),
    );
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return result;
}

/** Statements of read requests by where they ran, summed over the API processes (their /metrics). */
export async function routedReads(ports: number[], token: string): Promise<{ replica: number; primary: number }> {
  const sum = { replica: 0, primary: 0 };
  for (const port of ports) {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`GET /metrics on ${port}: ${res.status}`);
    for (const m of (await res.text()).matchAll(/^db_read_statements_total\{target="(replica|primary)"\} (\d+)/gm))
      sum[m[1] as 'replica' | 'primary'] += Number(m[2]);
  }
  return sum;
}

/** What reads the replica set's own checks and write positions: not reads of the API's data. */
const MONITORING = `query ~* '(pg_current_wal|pg_last_wal_replay|pg_is_in_recovery|pg_stat_statements)'`;

export interface ServerReads {
  selects: number;
  /** The most frequent SELECTs (calls, the statement's start). */
  top: { calls: number; query: string }[];
}

/** SELECT statements a server ran since its last reset (pg_stat_statements), the replicas' checks left out. */
export async function serverReads(url: string): Promise<ServerReads> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const rows = (
      await c.query<{ calls: string; query: string }>(
        `SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS query FROM pg_stat_statements
         WHERE query ~* '^\\s*select' AND NOT (${MONITORING}) ORDER BY calls DESC`,
      )
    ).rows;
    return {
      selects: rows.reduce((s, r) => s + Number(r.calls), 0),
      top: rows.slice(0, 8).map((r) => ({ calls: Number(r.calls), query: r.query })),
    };
  } finally {
    await c.end();
  }
}

export async function resetServerReads(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('SELECT pg_stat_statements_reset()');
  } finally {
    await c.end();
  }
}
