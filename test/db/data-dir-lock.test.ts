import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError } from '../../src/db/data-dir-lock.ts';
import { nodeArgs } from '../helpers/processes/node-process.ts';

/**
 * The DATA_DIR lock between processes that cannot see each other's pids (two containers on one volume): each
 * holder runs in its own PID namespace (`unshare`, root only), where it is pid 1, so a pid check could never
 * tell them apart. The second refuses with the server's one-line message; a holder killed with SIGKILL leaves a
 * lock that is taken over once stale.
 */
const holder = fileURLToPath(new URL('../fixtures/data-dir-lock-holder.ts', import.meta.url));
const STALE_MS = 2_000;
const isRoot = process.getuid?.() === 0;
const inCi = Boolean(process.env.CI);
if (!isRoot && !inCi) console.warn('data-dir lock across PID namespaces: skipped (needs root for unshare)');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) killGroup(child);
});

/** Kills unshare and, through --kill-child, the namespace's pid 1 (which ignores SIGTERM, having no handler). */
const killGroup = (child: ChildProcess) => {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
};

interface Holder {
  child: ChildProcess;
  /** Its first line on stdout ("locked by pid N"), or null when it exited first. */
  locked: Promise<string | null>;
  exited: Promise<{ code: number | null; stderr: string }>;
}

/** A holder in its own PID namespace (a cold process: slow on a busy machine, hence no short timeouts). */
function startHolder(dir: string): Holder {
  const args = ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', process.execPath];
  const child = spawn('unshare', [...args, ...nodeArgs(holder, dir, String(STALE_MS))], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stderr })),
  );
  const locked = new Promise<string | null>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    void exited.then(() => resolve(null));
  });
  return { child, locked, exited };
}

describe.skipIf(!isRoot && !inCi)('the DATA_DIR lock across PID namespaces', () => {
  it('refuses a second process with one line, and a SIGKILLed holder’s lock is taken over once stale', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-lock-'));
    try {
      const first = startHolder(dir);
      expect(await first.locked).toBe('locked by pid 1'); // its own namespace: both holders are pid 1

      const second = startHolder(dir);
      const refused = await second.exited;
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toContain(`The embedded database in ${dir} is in use by another process (pid 1)`);

      killGroup(first.child);
      await first.exited;
      // Twice the stale age: a loaded machine may run the killed holder's last refresh late.
      await new Promise((r) => setTimeout(r, STALE_MS * 2));
      const third = startHolder(dir);
      const thirdLocked = await third.locked;
      expect(thirdLocked, thirdLocked === null ? (await third.exited).stderr : '').toBe('locked by pid 1');
      killGroup(third.child);
      await third.exited;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

describe('the DATA_DIR lock in one process', () => {
  it('is refused while held, released on release(), and a leftover pid file of a dead process is taken over', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-lock-'));
    try {
      const lock = acquireDataDirLock(dir);
      expect(() => acquireDataDirLock(dir)).toThrow(DataDirLockedError);
      expect(() => acquireDataDirLock(dir)).toThrow(`in use by another process (pid ${process.pid})`);
      lock.release();
      lock.release();
      acquireDataDirLock(dir).release();

      // An earlier release's pid file: a live pid of this namespace still holds it, a dead one does not.
      const pidFile = path.join(dir, 'server.lock');
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      writeFileSync(pidFile, dead.stdout);
      acquireDataDirLock(dir).release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a lock taken over while held to onCompromised', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-lock-'));
    try {
      let lost: Error | undefined;
      const lock = acquireDataDirLock(dir, { staleMs: 2_000, updateMs: 1_000, onCompromised: (e) => (lost = e) });
      // Another holder replaces the lock directory (what a takeover after a stall looks like from here).
      rmSync(path.join(dir, 'server.lock'), { recursive: true });
      await new Promise((r) => setTimeout(r, 1_500));
      expect(lost?.message).toBeTruthy();
      lock.release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
