import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Helpers of bench/hotpath.ts: servers in child processes, /proc readings, the median, and the top of a V8 CPU
// profile (.cpuprofile, as `node --cpu-prof` writes it): self time per function, summed over every node of the
// call tree that names it, as lines of "share  ms  function  file:line".

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function topOfProfile(profile: CpuProfile, n: number): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const f = byId.get(id)?.callFrame;
    if (!f) return;
    const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '');
    const where = file ? `${file.replace(/^.*\/(dist|src)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const label = `${f.functionName || '(anonymous)'}  ${where}`.trim();
    self.set(label, (self.get(label) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([label, us]) =>
        `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${label}`,
    );
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
export const statusField = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(field))
      ?.split(/\s+/)[1] ?? NaN,
  ) / 1024;
/** utime + stime of the process in ms (clock ticks of 10 ms). */
export const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

export interface Server {
  child: ChildProcess;
  exited: Promise<number | null>;
}

export function spawnServer(args: string[], env: Record<string, string> = {}, cwd = ROOT): Server {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

export async function ready(server: Server, url: string, t0: number): Promise<number> {
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`${url}: server exited with ${server.child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return performance.now() - t0;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) throw new Error(`${url}: not healthy after 60 s`);
    await sleep(5);
  }
}

export async function stop(server: Server, expectZero = false) {
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  const code = await Promise.race([server.exited, sleep(10_000).then(() => 'timeout' as const)]);
  if (code === 'timeout') {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  if (expectZero && code !== 0) throw new Error(`SIGTERM exit code ${code}`);
}
