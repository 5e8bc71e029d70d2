// A PgBouncer of a test's own (scripts/pgbouncer.sh: Debian's 1.18, transaction mode) in front of the server of
// TEST_DATABASE_URL, on a free loopback port, with the pool size the test needs.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SCRIPT = fileURLToPath(new URL('../../../scripts/pgbouncer.sh', import.meta.url));

export const pgbouncerInstalled = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].some((p) => existsSync(p));

export interface TestPgBouncer {
  port: number;
  /** `direct` (a URL on the upstream server) with the host and port of this PgBouncer. */
  urlFor(direct: string): string;
  log(): Promise<string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startPgBouncer(upstreamUrl: string, poolSize: number): Promise<TestPgBouncer> {
  const upstream = new URL(upstreamUrl);
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-pgbouncer-'));
  const env = {
    ...process.env,
    PGBOUNCER_DIR: dir,
    PGBOUNCER_UPSTREAM_HOST: upstream.hostname,
    PGBOUNCER_UPSTREAM_PORT: upstream.port || '5432',
    PGBOUNCER_USER: decodeURIComponent(upstream.username) || 'postgres',
  };
  const run = (cmd: string) => promisify(execFile)('bash', [SCRIPT, cmd, String(port), String(poolSize)], { env });
  await run('start');
  return {
    port,
    urlFor(direct) {
      const url = new URL(direct);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    log: () => readFile(path.join(dir, 'pgbouncer.log'), 'utf8').catch(() => ''),
    stop: async () => void (await run('stop')),
  };
}
