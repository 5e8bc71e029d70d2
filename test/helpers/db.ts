import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';

/** TEST_DATABASE_URL selects PostgreSQL; otherwise every test file gets an in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = Boolean(TEST_DATABASE_URL);

export interface TestDatabase extends Database {
  url?: string;
}

/** A brand-new, migrated database owned by the calling test file; dropped on close. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const db = await openDatabase({ dataDir: 'memory://' });
    await migrate(db.sql);
    return db;
  }
  const scratch = await createScratchDatabase(TEST_DATABASE_URL, 'fleet_t');
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
