import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';

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
  const name = `fleet_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir: 'unused', poolSize: 10 });
  await migrate(db.sql);
  return {
    ...db,
    url: url.toString(),
    async close() {
      await db.close();
      const drop = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
      await drop.end();
    },
  };
}
