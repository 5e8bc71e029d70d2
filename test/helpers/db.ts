import { openAsBlob } from 'node:fs';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { createScratchDatabase } from './scratch-database.ts';

import { TEST_DATABASE_URL } from './test-env.ts';

export { TEST_DATABASE_URL, onPostgres } from './test-env.ts';

export interface TestDatabase extends Database {
  url?: string;
}

/**
 * A brand-new, migrated database owned by the calling test file; dropped on close. It is a copy of the template
 * test/global-setup.ts migrated once for the run; `migrate` then finds nothing to apply and only proves it.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const template = inject('pgliteTemplate');
    const db = await openDatabase({
      dataDir: 'memory://',
      pgliteTemplate: template ? await openAsBlob(template) : undefined,
    });
    await migrate(db.sql);
    return db;
  }
  const scratch = await createScratchDatabase(TEST_DATABASE_URL, 'fleet_t', inject('postgresTemplate') || undefined);
  const db = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 10 });
  await migrate(db.sql);
  return {
    ...db,
    url: scratch.url,
    async close() {
      await db.close();
      await scratch.drop().catch(() => {});
    },
  };
}
