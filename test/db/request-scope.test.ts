import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import {
  DatabaseUnavailableError,
  expireRequestScope,
  newRequestScope,
  runInRequestScope,
} from '../../src/db/request-scope.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';

/**
 * The request deadline on pool connections. pg-pool hands a waiting caller its connection from inside the
 * release() of whoever freed it: the statement must still run under the caller's own request scope. And a request
 * transaction reached by the deadline while its handler still holds the connection must not go back to the pool.
 */
describe.skipIf(!onPostgres)('the request deadline on PostgreSQL connections', () => {
  let base: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    base = await createTestDatabase();
    db = await openDatabase({ databaseUrl: base.url, dataDir: 'unused', poolSize: 1 });
    await db.sql.exec('CREATE TABLE deadline_probe (v int)');
  });
  afterAll(async () => {
    await db.close();
    await base.close();
  });

  it("a statement that waited for a connection runs under its own request's deadline, not the releaser's", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    // Request B (in time) holds the only connection.
    const b = runInRequestScope(newRequestScope(), () =>
      db.rawTransaction(async () => {
        holding();
        await gate;
      }),
    );
    await held;
    // Request A waits for it, and its deadline passes meanwhile.
    const scopeA = newRequestScope();
    const a = runInRequestScope(scopeA, () => db.sql.query('SELECT 1 AS one'));
    await new Promise((r) => setTimeout(r, 50));
    expireRequestScope(scopeA);
    release();
    await b;
    await expect(a).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // In time, the same wait succeeds.
    expect(await runInRequestScope(newRequestScope(), () => db.sql.query('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  });

  it('a request transaction reached by the deadline is ended and its connection discarded, not pooled', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const scope = newRequestScope();
    const run = runInRequestScope(scope, () =>
      db.ambient(async () => {
        await db.sql.query('INSERT INTO deadline_probe VALUES (1)');
        holding();
        await gate; // e.g. a slow call outside the database, with the transaction open
        await db.sql.query('INSERT INTO deadline_probe VALUES (2)');
      }),
    );
    await held;
    expireRequestScope(scope);
    await new Promise((r) => setTimeout(r, 50));
    // The handler may still hold the connection: it must not be handed to another request.
    expect(db.poolStats()).toMatchObject({ total: 0, idle: 0 });
    release();
    await expect(run).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(await db.sql.query('SELECT count(*)::int AS n FROM deadline_probe')).toEqual([{ n: 0 }]);
  });
});
