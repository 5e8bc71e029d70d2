// One migrated template database per test run; every test file then copies it instead of migrating its own.
// PGlite: a data directory that each file copies into a fresh in-memory instance (and one from before the
// migrations, for tests of the migrations), kept between runs (pglite-clusters.ts). PostgreSQL: a template database
// migrated for the run, which each file clones with CREATE DATABASE … TEMPLATE. Each file still owns its database.
import type { TestProject } from 'vitest/node';
import { pgliteClusters } from '../db/pglite-clusters.ts';
import { createScratchDatabase } from '../db/scratch-database.ts';
import { openDatabase } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrator.ts';
import { TEST_DATABASE_TEMPLATE, TEST_DATABASE_URL } from './test-env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data directory (embedded runs). */
    pgliteTemplateDir: string;
    /** A PGlite data directory before any migration (embedded runs). */
    pgliteEmptyDir: string;
    /** Name of a migrated PostgreSQL database to clone (PostgreSQL runs). */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  if (TEST_DATABASE_URL && TEST_DATABASE_TEMPLATE) {
    // An existing database (the result of an upgrade): every file copies it; migrate() only proves it current.
    const url = Object.assign(new URL(TEST_DATABASE_URL), { pathname: `/${TEST_DATABASE_TEMPLATE}` }).toString();
    const db = await openDatabase({ databaseUrl: url, dataDir: 'unused', poolSize: 1 });
    await migrate(db.sql);
    await db.close();
    project.provide('postgresTemplate', TEST_DATABASE_TEMPLATE);
    project.provide('pgliteTemplateDir', '');
    project.provide('pgliteEmptyDir', '');
    return;
  }
  if (TEST_DATABASE_URL) {
    const template = await createScratchDatabase(TEST_DATABASE_URL, 'fleet_tpl');
    const db = await openDatabase({ databaseUrl: template.url, dataDir: 'unused', poolSize: 1 });
    await migrate(db.sql);
    await db.close();
    project.provide('postgresTemplate', new URL(template.url).pathname.slice(1));
    project.provide('pgliteTemplateDir', '');
    project.provide('pgliteEmptyDir', '');
    return () => template.drop();
  }
  const clusters = await pgliteClusters();
  project.provide('pgliteTemplateDir', clusters.migrated);
  project.provide('pgliteEmptyDir', clusters.empty);
  project.provide('postgresTemplate', '');
}
