// Requests to a running API from the benchmark's own process, one at a time or from ten workers, with their
// latencies: the scale and pooler benchmarks' client. BENCH_CLIENT picks undici (default) or Node's fetch.
import { Pool as HttpPool } from 'undici';
import { text } from './env.ts';
import { median, pct, timed } from './stats.ts';

/** undici: a pool of 10 keep-alive connections, as a load tool or a server-side integrator sends requests; fetch:
 * Node's fetch, whose own CPU on the shared cores adds to the tail. */
export const CLIENT = text('BENCH_CLIENT', 'undici');
if (CLIENT !== 'undici' && CLIENT !== 'fetch') throw new Error('BENCH_CLIENT is undici or fetch');

export interface Stats {
  p50: number;
  p99: number;
}

/** `n` calls one after another. */
export async function sequential(fn: () => Promise<unknown>, n: number): Promise<Stats> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await timed(fn));
  return { p50: median(xs), p99: pct(xs, 99) };
}

/** `n` calls from `workers` closed loops. */
export async function concurrent(fn: () => Promise<unknown>, n: number, workers = 10): Promise<Stats> {
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
