import { spawn } from 'node:child_process';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/net/tcp-proxy.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';
import { TEST_SECRETS_KEYS } from '../helpers/run/test-env.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Starts the real server (src/main.ts) and waits for it to exit, or for `until` to see its output. */
function startServer(
  env: Record<string, string>,
  until?: (stdout: string) => boolean,
): Promise<Run & { kill(): void }> {
  const started = Date.now();
  const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    const done = (code: number | null) =>
      resolve({ code, stdout, stderr, ms: Date.now() - started, kill: () => child.kill('SIGTERM') });
    child.stdout.on('data', (d) => {
      stdout += d;
      if (until?.(stdout)) done(null);
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => done(code));
  });
}

describe.skipIf(!onPostgres)('start-up against a database that is not there', () => {
  let base: TestDatabase;
  let proxy: TcpProxy;
  let url: string;
  const env = () => ({
    DATABASE_URL: url,
    DB_STARTUP_TIMEOUT_MS: '2500',
    DB_CONNECT_TIMEOUT_MS: '400',
    DB_QUERY_TIMEOUT_MS: '400',
  });

  beforeAll(async () => {
    base = await createTestDatabase();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(base.url!).port || 5432) });
    const u = new URL(base.url!);
    u.host = `127.0.0.1:${proxy.port}`;
    url = u.toString();
  });
  afterAll(async () => {
    await proxy?.close();
    await base?.close();
  });

  it.each(['refuse', 'blackhole'] as const)(
    '%s: retries with a log line per attempt, then exits 1 with one line',
    async (mode) => {
      await proxy.setMode(mode);
      const run = await startServer(env());
      expect(run.code).toBe(1);
      expect(run.ms).toBeLessThan(10_000);
      const retries = run.stdout.split('\n').filter((l) => l.includes('database not reachable'));
      expect(retries.length).toBeGreaterThanOrEqual(2);
      const errLines = run.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('npm warn'));
      expect(errLines).toHaveLength(1);
      expect(errLines[0]).toMatch(/^fleet API failed to start: database not reachable after \d+ attempts in 3 s: /);
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
      await proxy.setMode('pass');
    },
  );

  it('starts once the database comes back within the start-up window', async () => {
    await proxy.setMode('refuse');
    let healed = false;
    const run = await startServer({ ...env(), DB_STARTUP_TIMEOUT_MS: '15000' }, (out) => {
      // The database comes back after the first failed attempt.
      if (!healed && out.includes('database not reachable')) {
        healed = true;
        void proxy.setMode('pass');
      }
      return out.includes('fleet API ready');
    });
    run.kill();
    expect(run.stdout).toContain('database not reachable');
    expect(run.stdout).toContain('fleet API ready');
  });
});

describe.skipIf(!onPostgres)('start-up while another process holds the migration lock', () => {
  it('logs who holds it, then exits 1 with one line after MIGRATION_LOCK_WAIT_MS', async () => {
    const base = await createTestDatabase();
    const holder = new pg.Client({ connectionString: base.url });
    await holder.connect();
    try {
      await holder.query(`SET application_name = 'migrating-elsewhere'; SELECT pg_advisory_lock(72707341)`);
      const run = await startServer({ DATABASE_URL: base.url!, MIGRATION_LOCK_WAIT_MS: '1500' });
      expect(run.code).toBe(1);
      const waiting = run.stdout.split('\n').filter((l) => l.includes('waiting for the migration lock'));
      expect(waiting[0]).toMatch(/"level":40.*held by server process \d+ \(application \\"migrating-elsewhere\\"/);
      const errLines = run.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('npm warn'));
      expect(errLines).toHaveLength(1);
      expect(errLines[0]).toMatch(
        /^fleet API failed to start: migration lock: lock 72707341 not acquired in 2 s; held by/,
      );
    } finally {
      await holder.end();
      await base.close();
    }
  });
});
