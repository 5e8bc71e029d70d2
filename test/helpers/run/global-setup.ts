// Migrates one template database per test run; every test file then copies it instead of migrating its own.
// PGlite: a data-directory dump that each file loads into a fresh in-memory instance. PostgreSQL: a template
// database that each file clones with CREATE DATABASE … TEMPLATE. Each file still owns its database.
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { createScratchDatabase } from '../db/scratch-database.ts';
import { openDatabase, type SqlRunner } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrator.ts';
import { TEST_DATABASE_URL } from './test-env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of a migrated PGlite data-directory dump (embedded runs). */
    pgliteTemplate: string;
    /** Name of a migrated PostgreSQL database to clone (PostgreSQL runs). */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  if (TEST_DATABASE_URL) {
    const template = await createScratchDatabase(TEST_DATABASE_URL, 'fleet_tpl');
    const db = await openDatabase({ databaseUrl: template.url, dataDir: 'unused', poolSize: 1 });
    await migrate(db.sql);
    await db.close();
    project.provide('postgresTemplate', new URL(template.url).pathname.slice(1));
    project.provide('pgliteTemplate', '');
    return () => template.drop();
  }
  const pglite = new PGlite();
  const sql: SqlRunner = {
    exec: async (text) => void (await pglite.exec(text)),
    query: async <T>(text: string, params: unknown[] = []) => (await pglite.query<T>(text, params)).rows,
    withExclusiveLock: async (_lockId, fn) => fn(sql),
  };
  await migrate(sql);
  // Every file loads this dump, and unpacking it costs by the file: the two template databases (a third of the
  // cluster's files) are never used by a test, which works in `postgres`.
  for (const name of ['template0', 'template1']) {
    await pglite.exec(`UPDATE pg_database SET datistemplate = false WHERE datname = '${name}'`);
    await pglite.exec(`DROP DATABASE ${name}`);
  }
  // A test database holds little: PostgreSQL's default 128 MB of shared buffers costs each start more to set up
  // than it saves.
  await pglite.exec("ALTER SYSTEM SET shared_buffers = '16MB'");
  await pglite.exec('CHECKPOINT');
  const file = path.join(tmpdir(), `fleet-test-template-${process.pid}-${Date.now()}.tar`);
  // Uncompressed: each file loads it, and gunzip would cost more than the bytes save.
  await writeFile(file, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  await pglite.close();
  project.provide('pgliteTemplate', file);
  project.provide('postgresTemplate', '');
  return () => rm(file, { force: true });
}
