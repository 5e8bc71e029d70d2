// Every run's figures as JSON in bench/results/ (ignored by git), beside the console table: the machine, the
// knobs and the numbers, so a run can be compared later without copying its output. docs/performance.md holds
// the figures the project quotes.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './server.ts';

const startedAt = new Date();
const loadAtStart = os.loadavg()[0];

/** Writes bench/results/<name>-<time>.json and prints its path on stderr; returns the path. */
export function writeResults(name: string, results: unknown): string {
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const file = path.join(dir, `${name}-${stamp}.json`);
  const knobs = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_')));
  const cpus = os.cpus();
  const record = {
    benchmark: name,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
      memoryMb: Math.round(os.totalmem() / 2 ** 20),
      loadAverage: { start: loadAtStart, end: os.loadavg()[0] },
    },
    knobs,
    results,
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.error(`results: ${path.relative(ROOT, file)}`);
  return file;
}
