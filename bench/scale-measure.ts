// The scale benchmark's client and timing: requests to the API (undici or fetch), percentiles, sequential and
// concurrent runs. BENCH_ROUNDS, BENCH_SAMPLES and BENCH_CLIENT are read here (see scale.ts).
import { Pool as HttpPool } from 'undici';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
export const CLIENT = process.env.BENCH_CLIENT ?? 'undici';
if (CLIENT !== 'undici' && CLIENT !== 'fetch') throw new Error('BENCH_CLIENT is undici or fetch');

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
export const median = (xs: number[]) => pct(xs, 50);
/** A duration for the printed tables. */
export const f = (x: number) => `${x.toFixed(1)} ms`;

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export interface Stats {
  p50: number;
  p99: number;
}
export async function sequential(fn: () => Promise<unknown>, n = SAMPLES): Promise<Stats> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await timed(fn));
  return { p50: median(xs), p99: pct(xs, 99) };
}
export async function concurrent(fn: () => Promise<unknown>, n = SAMPLES * 2, workers = 10): Promise<Stats> {
  const xs: number[] = [];
  let left = n;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (left-- > 0) xs.push(await timed(fn));
    }),
  );
  return { p50: median(xs), p99: pct(xs, 99) };
}

export type Call = (
  path: string,
  init?: { method?: 'GET' | 'POST'; body?: string; key?: string },
) => Promise<ArrayBuffer>;

/** Requests to the API on 127.0.0.1:`port` with `key` (or another key per call); a status of 400 or more throws. */
export function apiClient(port: number, key: string): { call: Call; close(): Promise<void> } {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const base = `http://127.0.0.1:${port}/api/v1`;
  const http = new HttpPool(`http://127.0.0.1:${port}`, { connections: 10, pipelining: 1 });
  const call: Call = async (path, init = {}) => {
    const headers = init.key ? { ...auth, authorization: `Bearer ${init.key}` } : auth;
    const fail = (status: number, body: ArrayBuffer) =>
      new Error(`${init.method ?? 'GET'} ${path}: ${status} ${Buffer.from(body).toString().slice(0, 300)}`);
    if (CLIENT === 'fetch') {
      const res = await fetch(`${base}${path}`, { headers, method: init.method, body: init.body });
      const body = await res.arrayBuffer();
      if (!res.ok) throw fail(res.status, body);
      return body;
    }
    const res = await http.request({ path: `/api/v1${path}`, method: init.method ?? 'GET', headers, body: init.body });
    const body = await res.body.arrayBuffer();
    if (res.statusCode >= 400) throw fail(res.statusCode, body);
    return body;
  };
  return { call, close: () => http.close() };
}
