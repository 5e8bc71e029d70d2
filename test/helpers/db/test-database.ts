import { inject } from 'vitest';
import { openDatabase, type Database } from '../../../src/db/database.ts';
import { migrateDatabase } from '../../../src/db/direct.ts';
import { migrate } from '../../../src/db/migrator.ts';
import { pgliteFromTemplate } from './pglite-template.ts';
import { createScratchDatabase } from './scratch-database.ts';

import {
  TEST_DATABASE_DIRECT,
  TEST_DATABASE_POOLER_URL,
  TEST_DATABASE_TEMPLATE,
  TEST_DATABASE_URL,
} from '../run/test-env.ts';

export { TEST_DATABASE_URL, onPostgres } from '../run/test-env.ts';

export interface TestDatabase extends Database {
  /** What an app on this database is given as DATABASE_URL (through the pooler when the run has one). */
  url?: string;
  /** DATABASE_DIRECT_URL for an app on this database, when the run gives one (see `env`). */
  directUrl?: string;
  /**
   * The database settings of an app (a spawned server, loadConfig) on this database: DATABASE_URL, and
   * DATABASE_DIRECT_URL unless the run goes through a pooler alone (without a pooler the URL is direct, so the
   * direct URL is the same one).
   */
  env: Record<string, string>;
}

/**
 * A brand-new, migrated database owned by the calling test file; dropped on close. It is a copy of the template
 * test/helpers/run/global-setup.ts migrated once for the run; `migrate` then finds nothing to apply and only proves it.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const db = await openDatabase({
      dataDir: 'memory://',
      pglite: await pgliteFromTemplate(inject('pgliteTemplateDir')),
    });
    await migrate(db.sql);
    return { ...db, env: {} };
  }
  // A given template (TEST_DATABASE_TEMPLATE) may hold gigabytes: copied file by file.
  const scratch = await createScratchDatabase(
    TEST_DATABASE_URL,
    'fleet_t',
    inject('postgresTemplate') || undefined,
    Boolean(TEST_DATABASE_TEMPLATE),
  );
  const pooled = TEST_DATABASE_POOLER_URL ? onDatabase(TEST_DATABASE_POOLER_URL, scratch.url) : undefined;
  const url = pooled ?? scratch.url;
  const directUrl = !pooled || TEST_DATABASE_DIRECT ? scratch.url : undefined;
  const env: Record<string, string> = { DATABASE_URL: url };
  if (directUrl) env.DATABASE_DIRECT_URL = directUrl;
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused', poolSize: 10 });
  await migrateDatabase(db, { directUrl });
  return {
    ...db,
    url,
    directUrl,
    env,
    async close() {
      await db.close();
      await scratch.drop().catch(() => {});
    },
  };
}

/**
 * A database with no migration applied, owned by the calling test file (tests of the migrations themselves and of
 * upgrades from an earlier schema); dropped on close. Direct, never through the run's pooler.
 */
export async function createUnmigratedDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const db = await openDatabase({ dataDir: 'memory://', pglite: await pgliteFromTemplate(inject('pgliteEmptyDir')) });
    return { ...db, env: {} };
  }
  const scratch = await createScratchDatabase(TEST_DATABASE_URL, 'fleet_u');
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 5 });
  return {
    ...db,
    url: scratch.url,
    directUrl: scratch.url,
    env: { DATABASE_URL: scratch.url, DATABASE_DIRECT_URL: scratch.url },
    async close() {
      await db.close();
      await scratch.drop().catch(() => {});
    },
  };
}

/** The pooler's URL naming the database of `direct`. */
function onDatabase(poolerUrl: string, direct: string): string {
  const url = new URL(poolerUrl);
  url.pathname = new URL(direct).pathname;
  return url.toString();
}
