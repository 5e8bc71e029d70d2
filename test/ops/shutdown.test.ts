import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { seedEmbeddedDatabase } from '../helpers/processes/embedded-data-dir.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'fleet-shutdown-'));
// Shutdown is the subject, not the first start: the processes open a database already migrated.
seedEmbeddedDatabase(dir);
const port = 4400 + Math.floor(Math.random() * 500);
const env = { PATH: process.env.PATH, DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn' };
// The server itself logs at info: its shutdown lines are what an operator reads after a stop. It drains as it
// does behind Caddy in the Compose stack, for a shorter time.
const DRAIN_MS = 4_000;
const serverEnv = { ...env, LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: String(DRAIN_MS) };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One request (on a fresh connection, or the agent's): the status and Connection header, or the error code. */
function get(path: string, agent: Agent | false = false): Promise<{ status: number; connection?: string } | string> {
  return new Promise((resolve) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    })
      .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
      .end();
  });
}

async function waitHealthy() {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('server did not start');
}

describe('SHUTDOWN_DRAIN_MS', () => {
  it('is off by default and, taking up to twice its length, must fit in SHUTDOWN_TIMEOUT_MS', () => {
    expect(loadConfig({}).shutdownDrainMs).toBe(0);
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '5000' }).shutdownDrainMs).toBe(5000);
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: '7500' })).toThrow(/SHUTDOWN_DRAIN_MS: must be less than half/);
  });
});

describe('graceful shutdown (real process, embedded database)', () => {
  it(
    'drains after SIGTERM (readiness 503, then no listener and connections closed after their answer), finishes an in-flight request, then exits 0 and releases the data directory',
    { timeout: 180_000 },
    async () => {
      const quick = spawnSync(process.execPath, nodeArgs('src/cli/admin.ts', 'quickstart', '--json'), {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(quick.status, quick.stderr).toBe(0);
      const key = JSON.parse(quick.stdout).key.key as string;

      const server: ChildProcess = spawn(process.execPath, nodeArgs('src/main.ts'), {
        env: serverEnv,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      server.stdout!.on('data', (chunk) => (stdout += chunk));
      const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
      await waitHealthy();

      // Start a request whose body is not yet sent: it is in flight when the signal arrives.
      const body = JSON.stringify({ nickname: 'Sent during shutdown', assetClass: 'trailer' });
      const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/assets',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 10));
        setTimeout(() => {
          server.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(10)), 300);
        }, 300);
      });

      // First part of the drain: readiness says 503, so that balancers that probe move off; everything else is
      // answered as usual, keep-alive included.
      await new Promise((r) => setTimeout(r, 700));
      const drainStart = performance.now();
      const keptAlive = new Agent({ keepAlive: true, maxSockets: 1 });
      expect(await get('/api/v1/health')).toMatchObject({ status: 503 });
      expect(await get('/api/v1/health/live', keptAlive)).toEqual({ status: 200, connection: 'keep-alive' });
      // Second part: no listener (a balancer's new connection is refused, and it can retry elsewhere); a request
      // on a connection still open is answered, and its connection closed after the answer.
      await new Promise((r) => setTimeout(r, DRAIN_MS + 300 - (performance.now() - drainStart)));
      expect(await get('/api/v1/version', keptAlive)).toEqual({ status: 200, connection: 'close' });
      expect(await get('/api/v1/version')).toBe('ECONNREFUSED');

      const res = await response;
      expect(res.status, res.text).toBe(201);
      expect(JSON.parse(res.text)).toMatchObject({ ok: true, assetId: expect.any(String) });
      expect(await exited).toBe(0);
      expect(performance.now() - drainStart).toBeGreaterThan(DRAIN_MS - 1_000);
      const lines = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      // Start and end of the shutdown, the end with its total and per-step durations.
      expect(lines.find((l) => l.msg === 'shutting down')).toMatchObject({ level: 30, signal: 'SIGTERM' });
      expect(lines.at(-1)).toMatchObject({
        level: 30,
        msg: 'shutdown complete',
        signal: 'SIGTERM',
        durationMs: expect.any(Number),
        drainMs: expect.any(Number),
        httpMs: expect.any(Number),
        databaseMs: expect.any(Number),
      });
      expect(lines.at(-1)!.drainMs).toBeGreaterThanOrEqual(DRAIN_MS - 50);
      // The readiness polls above (waitHealthy) left no line at info.
      expect(lines.filter((l) => JSON.stringify(l).includes('/api/v1/health'))).toEqual([]);
      expect(existsSync(path.join(dir, 'server.lock'))).toBe(false);

      // The committed asset is there after the restart.
      const list = spawnSync(process.execPath, nodeArgs('src/cli/admin.ts', 'key', 'list', '--org', 'demo', '--json'), {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(list.status, list.stderr).toBe(0);
    },
  );
});
