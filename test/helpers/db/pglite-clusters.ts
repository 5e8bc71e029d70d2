// The embedded runs' clusters: PGlite data directories, one before any migration and one migrated, which test files
// copy instead of creating and migrating their own. Building them is most of a short run's time, so they are kept in
// node_modules/.cache under a hash of what they are made from, and a run whose migrations did not change reuses them.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { SqlRunner } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrator.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'fleet-test-clusters');
/** Clusters kept for other states of the sources (another branch), the least recently used going first. */
const KEEP = 4;

export interface PgliteClusters {
  /** initdb's cluster with this run's settings, no migration applied. */
  empty: string;
  /** The same cluster with every migration applied. */
  migrated: string;
}

export async function pgliteClusters(): Promise<PgliteClusters> {
  const dir = path.join(CACHE, inputsHash());
  if (!existsSync(dir)) await build(dir);
  const now = new Date();
  await utimes(dir, now, now);
  await prune(path.basename(dir));
  return { empty: path.join(dir, 'empty'), migrated: path.join(dir, 'migrated') };
}

/** What the clusters are made of: the migrations, the code that applies them, this file, and PGlite's version. */
function inputsHash(): string {
  const hash = createHash('sha256');
  const files = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .map((name) => path.join(dir, name))
      .filter((name) => statSync(path.join(ROOT, name)).isFile());
  const inputs = [
    ...files('prisma/migrations'),
    ...files('src/db'),
    path.relative(ROOT, fileURLToPath(import.meta.url)),
    'node_modules/@electric-sql/pglite/package.json',
  ].sort();
  for (const name of inputs)
    hash
      .update(`${name}\0`)
      .update(readFileSync(path.join(ROOT, name)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Builds both clusters in a directory of its own, then renames it into place (a concurrent run may do the same). */
async function build(dir: string): Promise<void> {
  const work = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await mkdir(work, { recursive: true });
  try {
    const pglite = new PGlite();
    try {
      const sql: SqlRunner = {
        exec: async (text) => void (await pglite.exec(text)),
        query: async <T>(text: string, params: unknown[] = []) => (await pglite.query<T>(text, params)).rows,
        withExclusiveLock: async (_lockId, fn) => fn(sql),
      };
      // Every file copies a cluster, and the copy costs by the file: the two template databases (a third of the
      // cluster's files) are never used by a test, which works in `postgres`.
      for (const name of ['template0', 'template1']) {
        await pglite.exec(`UPDATE pg_database SET datistemplate = false WHERE datname = '${name}'`);
        await pglite.exec(`DROP DATABASE ${name}`);
      }
      // A test database holds little and has one connection, and every start sets its shared memory to zero: the
      // defaults (128 MB of buffers, lock and process tables for 100 connections) cost each start more than they
      // save. Fewer connections would leave fewer lock slots per transaction, so each transaction may hold more.
      for (const setting of ["shared_buffers = '1MB'", 'max_connections = 5', 'max_locks_per_transaction = 1024'])
        await pglite.exec(`ALTER SYSTEM SET ${setting}`);
      await writeDataDir(pglite, path.join(work, 'empty'));
      await migrate(sql);
      await writeDataDir(pglite, path.join(work, 'migrated'));
    } finally {
      await pglite.close();
    }
    await rename(work, dir).catch((err: NodeJS.ErrnoException) => {
      // Another run put the same clusters in place first.
      if (!existsSync(dir)) throw err;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Checkpoints the cluster and writes its data directory to `target` (PGlite dumps it as a tar archive). */
async function writeDataDir(pglite: PGlite, target: string): Promise<void> {
  await pglite.exec('CHECKPOINT');
  const dump = `${target}.tar`;
  await writeFile(dump, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  await mkdir(target);
  // The dump's member names start with "/", which tar strips.
  const untar = spawnSync('tar', ['-xf', dump, '-C', target], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`could not unpack a test cluster: ${untar.stderr || untar.error}`);
  await rm(dump);
}

/**
 * Keeps the current clusters and the most recently used others. A build in progress is left alone, one abandoned
 * (its run was killed) goes after an hour.
 */
async function prune(current: string): Promise<void> {
  const entries = readdirSync(CACHE)
    .filter((name) => name !== current)
    .map((name) => ({ name, used: statSync(path.join(CACHE, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  const abandoned = entries.filter((e) => e.name.endsWith('.tmp') && e.used < Date.now() - 3_600_000);
  const old = entries.filter((e) => !e.name.endsWith('.tmp')).slice(KEEP - 1);
  for (const { name } of [...abandoned, ...old]) await rm(path.join(CACHE, name), { recursive: true, force: true });
}
