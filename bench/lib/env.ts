// The knobs the benchmarks share (BENCH_*), read in one place so bench/README.md's table and the code agree.
// Each entry point picks its own defaults (rounds, durations) through num().

/** Admin URL of the PostgreSQL server the benchmarks create their scratch databases on. */
export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** A numeric knob, or its default when unset; a value that is not a number stops the run before any work. */
export function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name}=${raw} is not a number`);
  return n;
}

/** An on/off knob: on only when set to 1. */
export const flag = (name: string) => process.env[name] === '1';

/** A text knob, or its default. */
export const text = (name: string, fallback: string) => process.env[name] || fallback;

/** A time-stamped progress line on stdout (long benchmarks). */
export const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
