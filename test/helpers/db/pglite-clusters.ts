// The embedded runs' clusters: PGlite data directories, one before any migration and one migrated, which test files
// copy instead of creating and migrating their own. Building them is most of a short run's time, so they are kept
// between runs (build-cache.ts) and rebuilt when the migrations, the code applying them or PGlite change.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { SqlRunner } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrator.ts';
import { cachedBuild, filesUnder, hashOf, ROOT } from '../run/build-cache.ts';

export interface PgliteClusters {
  /** initdb's cluster with this run's settings, no migration applied. */
  empty: string;
  /** The same cluster with every migration applied. */
  migrated: string;
}

export async function pgliteClusters(): Promise<PgliteClusters> {
  const inputs = [
    ...filesUnder('prisma/migrations', 'src/db'),
    path.relative(ROOT, fileURLToPath(import.meta.url)),
    'node_modules/@electric-sql/pglite/package.json',
  ];
  const dir = await cachedBuild('fleet-test-clusters', hashOf(inputs), build);
  return { empty: path.join(dir, 'empty'), migrated: path.join(dir, 'migrated') };
}

async function build(dir: string): Promise<void> {
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
    await writeDataDir(pglite, path.join(dir, 'empty'));
    await migrate(sql);
    await writeDataDir(pglite, path.join(dir, 'migrated'));
  } finally {
    await pglite.close();
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
