// What the test runs build from the sources and keep between runs (the embedded database's clusters, the sources
// transpiled for spawned processes), in node_modules/.cache under a hash of their inputs: a run whose inputs did not
// change uses the last build, and `npm ci` starts from nothing.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE = path.join(ROOT, 'node_modules', '.cache');
/** Builds kept for other states of the sources (another branch), the least recently used going first. */
const KEEP = 4;
const ABANDONED_MS = 3_600_000;

/** Repository-relative paths of the files under `dirs` (recursively), sorted. */
export function filesUnder(...dirs: string[]): string[] {
  return dirs
    .flatMap((dir) =>
      readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((name) => path.join(dir, name)),
    )
    .filter((name) => statSync(path.join(ROOT, name)).isFile())
    .sort();
}

/** A short hash of the named files' paths and contents (repository-relative), and of `also`. */
export function hashOf(files: string[], ...also: string[]): string {
  const hash = createHash('sha256');
  for (const value of also) hash.update(`${value}\0`);
  for (const name of files)
    hash
      .update(`${name}\0`)
      .update(readFileSync(path.join(ROOT, name)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * The directory of `kind`'s build for `key`, made by `build` into a directory of its own and renamed into place
 * when missing (concurrent runs and test processes may build the same one: the first rename wins).
 */
export function cachedBuild(kind: string, key: string, build: (dir: string) => void): string;
export function cachedBuild(kind: string, key: string, build: (dir: string) => Promise<void>): Promise<string>;
export function cachedBuild(
  kind: string,
  key: string,
  build: (dir: string) => void | Promise<void>,
): string | Promise<string> {
  const parent = path.join(CACHE, kind);
  const dir = path.join(parent, key);
  const done = () => {
    const now = new Date();
    utimesSync(dir, now, now);
    prune(parent, key);
    return dir;
  };
  if (existsSync(dir)) return done();
  const work = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  mkdirSync(work, { recursive: true });
  const finish = () => {
    try {
      renameSync(work, dir);
    } catch (err) {
      if (!existsSync(dir)) throw err;
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return done();
  };
  const fail = (err: unknown) => {
    rmSync(work, { recursive: true, force: true });
    throw err;
  };
  try {
    const built = build(work);
    return built instanceof Promise ? built.then(finish, fail) : finish();
  } catch (err) {
    return fail(err);
  }
}

/**
 * Keeps the current build and the most recently used others. A build in progress is left alone; one abandoned (its
 * run was killed) goes after an hour.
 */
function prune(parent: string, current: string): void {
  const entries = readdirSync(parent)
    .filter((name) => name !== current)
    .map((name) => ({ name, used: statSync(path.join(parent, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  const abandoned = entries.filter((e) => e.name.endsWith('.tmp') && e.used < Date.now() - ABANDONED_MS);
  const old = entries.filter((e) => !e.name.endsWith('.tmp')).slice(KEEP - 1);
  for (const { name } of [...abandoned, ...old]) rmSync(path.join(parent, name), { recursive: true, force: true });
}
