// A PostgreSQL primary and a streaming replica of a test's own: initdb and pg_basebackup -R in a temporary directory,
// run as the postgres user (CI runs as root, and PostgreSQL refuses to run as root), on ports the test names.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

export const PG_BIN = process.env.PG_BIN || '/usr/lib/postgresql/15/bin';
export const streamingReplicaAvailable = ['initdb', 'pg_ctl', 'pg_basebackup'].every((b) =>
  existsSync(path.join(PG_BIN, b)),
);

const run = promisify(execFile);

export interface StreamingPair {
  primaryUrl: string;
  replicaUrl: string;
  /** SQL on the replica (pg_wal_replay_pause() and friends). */
  onReplica(sql: string): Promise<unknown[]>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  stop(): Promise<void>;
}

async function asPostgres(cmd: string, args: string[]) {
  const runner = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return run(runner[0] as string, runner[1] as string[], { maxBuffer: 16 * 1024 * 1024 });
}

function postgresIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'])));
  return { uid, gid };
}

/**
 * Starts a primary on `ports[0]` and its replica on `ports[1]` (loopback only, trust authentication); `settings`
 * are postgresql.conf lines added to both, after the defaults below (a later line wins).
 */
export async function startStreamingPair(ports: [number, number], settings: string[] = []): Promise<StreamingPair> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-replica-'));
  const ids = postgresIds();
  if (ids) chownSync(dir, ids.uid, ids.gid);
  chmodSync(dir, 0o700);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const bin = (b: string) => path.join(PG_BIN, b);
  const ctl = (data: string, action: string, ...extra: string[]) =>
    asPostgres(bin('pg_ctl'), ['-D', data, '-l', `${data}.log`, '-w', '-t', '60', action, ...extra]);
  const conf = (port: number) =>
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'hot_standby = on',
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 60',
      'shared_buffers = 32MB',
      'wal_receiver_status_interval = 1s',
      // An idle primary stays idle (no commits by autovacuum): the tests of lag rely on it.
      'autovacuum = off',
      ...settings,
    ].join('\n') + '\n';
  let replicaUp = false;
  const stop = async () => {
    await ctl(replicaDir, 'stop', '-m', 'immediate').catch(() => {});
    await ctl(primaryDir, 'stop', '-m', 'immediate').catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres(bin('initdb'), ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    appendFileSync(path.join(primaryDir, 'postgresql.conf'), conf(ports[0]));
    await ctl(primaryDir, 'start');
    await asPostgres(bin('pg_basebackup'), [
      ...['-h', '127.0.0.1', '-p', String(ports[0]), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream'],
    ]);
    await asPostgres('sh', ['-c', `printf "port = ${ports[1]}\\n" >> '${replicaDir}/postgresql.auto.conf'`]);
    await ctl(replicaDir, 'start');
    replicaUp = true;
  } catch (err) {
    await stop();
    throw err;
  }
  const replicaUrl = `postgresql://postgres@127.0.0.1:${ports[1]}/postgres`;
  return {
    primaryUrl: `postgresql://postgres@127.0.0.1:${ports[0]}/postgres`,
    replicaUrl,
    async onReplica(sql) {
      const client = new pg.Client({ connectionString: replicaUrl });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    },
    async stopReplica() {
      if (replicaUp) await ctl(replicaDir, 'stop', '-m', 'fast');
      replicaUp = false;
    },
    async startReplica() {
      if (!replicaUp) await ctl(replicaDir, 'start');
      replicaUp = true;
    },
    stop,
  };
}
