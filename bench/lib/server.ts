// Servers in child processes: the API (built or from source) and the baselines, started, awaited and stopped the
// same way by every benchmark, so start-up and shutdown are measured alike.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_SECRETS_KEYS } from './keys.ts';
import { num, sleep } from './env.ts';

/** The repository root: servers run from it so `fastify`, `pg` and `tsx` resolve to the project's copies. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** How long a server may take to answer its first request (a busy shared machine can need more than a minute). */
const START_TIMEOUT_MS = num('BENCH_START_TIMEOUT_MS', 60_000);

/** How to run the API: `js` is the production entry (needs `npm run build`), `tsx` compiles src/ on the fly. */
export const API_ENTRY = {
  js: ['dist/main.js'],
  tsx: ['--import', 'tsx', 'src/main.ts'],
} as const;

export interface Server {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
}

/**
 * `node <args>` from `cwd`. The child sees PATH and `env` only unless `inheritEnv` (then this process's environment
 * under `env`): a stray DATABASE_URL or LOG_LEVEL in the shell must not change what a baseline measures.
 */
export function spawnServer(
  args: readonly string[],
  env: Record<string, string> = {},
  opts: { cwd?: string; inheritEnv?: boolean } = {},
): Server {
  const base = opts.inheritEnv ? (process.env as Record<string, string>) : { PATH: process.env.PATH ?? '' };
  const child = spawn(process.execPath, [...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, pid: child.pid!, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

/** Plain-Node ES module source run with `--input-type=module -e` (the baselines: no tsx, no transform hooks). */
export const spawnInline = (code: string, args: string[]) => spawnServer(['--input-type=module', '-e', code, ...args]);

/** Waits for the first 2xx from `url`; returns the ms since `t0` (spawn time for a start-up figure). */
export async function ready(server: Server, url: string, t0 = performance.now()): Promise<number> {
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`${url}: server exited with ${server.child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return performance.now() - t0;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > START_TIMEOUT_MS)
      throw new Error(`${url}: not healthy after ${START_TIMEOUT_MS / 1000} s (BENCH_START_TIMEOUT_MS)`);
    await sleep(5);
  }
}

/** SIGTERM, then SIGKILL after 10 s; with `expectZero`, a non-zero exit code (a failed graceful shutdown) throws. */
export async function stop(server: Server, expectZero = false): Promise<void> {
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  const code = await Promise.race([server.exited, sleep(10_000).then(() => 'timeout' as const)]);
  if (code === 'timeout') {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  if (expectZero && code !== 0) throw new Error(`SIGTERM exit code ${code}`);
}

/** Stops every server of a run (the `finally` of an entry point); errors are ignored there. */
export async function stopAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map((s) => stop(s).catch(() => {})));
}

/** The API's environment for a benchmark: loopback, quiet logs, no rate limit in the way. */
export function apiEnv(port: number, env: Record<string, string>): Record<string, string> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    ...(env.DATABASE_URL ? { SECRETS_ENCRYPTION_KEYS: BENCH_SECRETS_KEYS } : {}),
    ...env,
  };
}

export const healthUrl = (port: number) => `http://127.0.0.1:${port}/api/v1/health`;

/** Starts the API and waits until it answers its health check; returns the server and its start-up in ms. */
export async function startApi(opts: {
  port: number;
  env: Record<string, string>;
  args?: readonly string[];
  root?: string;
  inheritEnv?: boolean;
}): Promise<{ server: Server; startMs: number }> {
  const t0 = performance.now();
  const server = spawnServer(opts.args ?? API_ENTRY.js, apiEnv(opts.port, opts.env), {
    cwd: opts.root,
    inheritEnv: opts.inheritEnv,
  });
  try {
    return { server, startMs: await ready(server, healthUrl(opts.port), t0) };
  } catch (err) {
    await stop(server);
    throw err;
  }
}

/** Stops the run early, with the command that fixes it, when an entry point needs the build. */
export function requireBuild(root = ROOT): void {
  if (!existsSync(path.join(root, 'dist/main.js')))
    throw new Error('dist/main.js is missing: run `npm run build` first');
}
