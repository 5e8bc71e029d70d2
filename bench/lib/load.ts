// autocannon runs against a server in another process, with that process's CPU per request (from /proc) and,
// on request, its RSS sampled during the run; and the alternating API/baseline rounds built on them.
import autocannon from 'autocannon';
import { cpuMs, statusMb } from './proc.ts';
import { median, roundRatios, round } from './stats.ts';

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  /** user + system CPU of the server process per request answered, in ms: steadier than req/s on a busy machine */
  cpuPerReqMs: number;
  non2xx: number;
  /** VmRSS samples in MB, when asked for */
  rssMb: number[];
}

/** One autocannon run of `duration` s against the server `pid`; `rssEveryMs` samples its RSS meanwhile. */
export async function measureLoad(
  pid: number,
  opts: autocannon.Options,
  duration: number,
  rssEveryMs = 0,
): Promise<Load> {
  const cpu0 = cpuMs(pid);
  const rssMb: number[] = [];
  const timer = rssEveryMs ? setInterval(() => rssMb.push(statusMb(pid, 'VmRSS')), rssEveryMs) : null;
  const r = await autocannon({ ...opts, duration });
  if (timer) clearInterval(timer);
  const cpu = cpuMs(pid) - cpu0;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuPerReqMs: cpu / Math.max(1, r.requests.total),
    non2xx: r.non2xx + r.errors,
    rssMb,
  };
}

export interface Pair {
  name: string;
  api: Load[];
  base: Load[];
}

export type Target = [pid: number, opts: autocannon.Options];

/**
 * The API and its baseline in alternating rounds (after a 2 s warm-up of each): round i of one side runs right
 * after round i of the other, so the ratio of a round compares like with like. Logs each round on stderr.
 */
export async function alternate(
  name: string,
  api: Target,
  base: Target,
  o: { rounds: number; duration: number; rssEveryMs?: number },
): Promise<Pair> {
  await measureLoad(api[0], api[1], 2);
  await measureLoad(base[0], base[1], 2);
  const p: Pair = { name, api: [], base: [] };
  for (let i = 0; i < o.rounds; i++) {
    const a = await measureLoad(api[0], api[1], o.duration, o.rssEveryMs);
    const b = await measureLoad(base[0], base[1], o.duration);
    p.api.push(a);
    p.base.push(b);
    const rss = a.rssMb.length ? `, RSS peak ${Math.max(...a.rssMb).toFixed(0)} MB` : '';
    const errors = a.non2xx + b.non2xx ? `, non-2xx/errors ${a.non2xx} vs ${b.non2xx}` : '';
    console.error(
      `${name} round ${i + 1}: ${a.rps.toFixed(0)} vs ${b.rps.toFixed(0)} req/s (${(a.rps / b.rps).toFixed(2)}x), ` +
        `CPU ${a.cpuPerReqMs.toFixed(3)} vs ${b.cpuPerReqMs.toFixed(3)} ms/req${rss}${errors}`,
    );
  }
  return p;
}

/** The medians of a pair and its ratios, as printed and as written to the JSON results. */
export function summarise(p: Pair) {
  const side = (loads: Load[]) => ({
    rps: round(median(loads.map((l) => l.rps)), 0),
    p50Ms: median(loads.map((l) => l.p50)),
    p99Ms: median(loads.map((l) => l.p99)),
    cpuPerReqMs: round(median(loads.map((l) => l.cpuPerReqMs)), 4),
    non2xx: loads.reduce((n, l) => n + l.non2xx, 0),
  });
  const api = side(p.api);
  const base = side(p.base);
  const rps = roundRatios(
    p.api.map((l) => l.rps),
    p.base.map((l) => l.rps),
  );
  return {
    name: p.name,
    api,
    baseline: base,
    ratio: round(rps.median, 2),
    roundRatios: rps.rounds.map((r) => round(r, 2)),
    cpuRatio: round(base.cpuPerReqMs / api.cpuPerReqMs, 2),
  };
}
