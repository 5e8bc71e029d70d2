import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrator.ts';
import { createUnmigratedDatabase, type TestDatabase } from '../helpers/db/test-database.ts';

/** What the migrations set on the database itself, for every session that opens on it afterwards. */
let db: TestDatabase;
beforeAll(async () => {
  db = await createUnmigratedDatabase();
  await migrate(db.sql);
});
afterAll(() => db?.close());

describe('database settings', () => {
  it('turns JIT compilation off for the database, so a new session plans without it', async () => {
    const [row] = await db.sql.query<{ settings: string[] | null }>(
      `SELECT setconfig AS settings FROM pg_db_role_setting
       WHERE setrole = 0 AND setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(row?.settings).toContain('jit=off');
    if (!db.url) return;
    const session = await openDatabase({ databaseUrl: db.url, dataDir: 'unused', poolSize: 1 });
    try {
      expect(await session.sql.query(`SHOW jit`)).toEqual([{ jit: 'off' }]);
    } finally {
      await session.close();
    }
  });
});
