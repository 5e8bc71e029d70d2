import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export interface DataDirLock {
  release(): void;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: string,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by another process (${owner}), usually the running server. ` +
        'Stop it first, or set DATABASE_URL to use PostgreSQL, which allows several processes.',
    );
  }
}

export interface DataDirLockOptions {
  /** A lock not refreshed for this long is taken over (its holder died without releasing it). */
  staleMs?: number;
  /** How often the holder refreshes the lock (at most half of staleMs). */
  updateMs?: number;
  /** Called when the lock was taken over while held; by default the process exits at once (see the ADR). */
  onCompromised?: (err: Error) => void;
}

/** Long enough that a start-up blocking the event loop (WASM compilation, migrations) never loses the lock. */
export const LOCK_STALE_MS = 30_000;
const LOCK_UPDATE_MS = 5_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** "pid N", plus the host when it is another one (another container or machine): who holds the lock. */
function describeOwner(ownerFile: string): string {
  try {
    const { pid, host } = JSON.parse(readFileSync(ownerFile, 'utf8')) as { pid: number; host: string };
    return host === hostname() ? `pid ${pid}` : `pid ${pid} on host ${host}`;
  } catch {
    return 'pid unknown';
  }
}

function exitOnCompromised(dataDir: string) {
  return (err: Error) => {
    console.error(
      `The lock on the embedded database in ${dataDir} was lost (${err.message}); another process may have ` +
        'opened it: exiting at once so that only one process writes to it.',
    );
    process.exit(1);
  };
}

/**
 * PGlite is single-process: two processes opening one data directory would corrupt it. The lock is a directory
 * made with mkdir (atomic, also on a volume shared by containers that cannot see each other's processes) whose
 * mtime its holder refreshes; one not refreshed for `staleMs` is taken over. See docs/adr/0025-data-dir-lock.md.
 */
export function acquireDataDirLock(dataDir: string, options: DataDirLockOptions = {}): DataDirLock {
  const lockPath = path.join(dataDir, 'server.lock');
  const ownerFile = path.join(dataDir, 'server.lock.owner');
  // A pid file left by an earlier release: its rule (a live pid of this namespace holds it), then it goes.
  if (statSync(lockPath, { throwIfNoEntry: false })?.isFile()) {
    const pid = Number(readFileSync(lockPath, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))
      throw new DataDirLockedError(dataDir, `pid ${pid}`);
    rmSync(lockPath, { force: true });
  }
  let unlock: () => void;
  let lost = false;
  const onCompromised = options.onCompromised ?? exitOnCompromised(dataDir);
  try {
    unlock = lockfile.lockSync(dataDir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: options.staleMs ?? LOCK_STALE_MS,
      update: options.updateMs ?? LOCK_UPDATE_MS,
      onCompromised: (err) => {
        lost = true;
        onCompromised(err);
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED')
      throw new DataDirLockedError(dataDir, describeOwner(ownerFile));
    throw err;
  }
  writeFileSync(ownerFile, JSON.stringify({ pid: process.pid, host: hostname() }));
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Lost to a takeover (onCompromised has been told): the lock and its owner file are the new holder's.
      if (lost) return;
      rmSync(ownerFile, { force: true });
      unlock();
    },
  };
}
