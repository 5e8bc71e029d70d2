import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openDatabase, type Database, type DatabaseTimeouts, type PreparedStatements } from '../../src/db/database.ts';
import {
  DatabaseUnavailableError,
  expireRequestScope,
  newRequestScope,
  runInRequestScope,
} from '../../src/db/request-scope.ts';
import { transaction } from '../../src/db/transaction.ts';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';
import { appOnDatabase, type AppOnDatabase } from '../helpers/app/test-app.ts';
import { TEST_DATABASE_URL } from '../helpers/db/test-database.ts';
import { createTenant, type TestTenant } from '../helpers/app/tenants.ts';
import { pgbouncerInstalled, startPgBouncer, type TestPgBouncer } from '../helpers/db/pgbouncer.ts';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/db/scratch-database.ts';
import { inCI } from '../helpers/run/test-env.ts';

/**
 * DATABASE_URL pointing at PgBouncer 1.18 in transaction mode (its own, with 2 server connections for many
 * clients, so consecutive transactions of one client land on different server sessions): nothing may rely on
 * session state. Under CI a missing pgbouncer fails the file (.ci/run installs it); elsewhere it is skipped.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type PooledApp = AppOnDatabase;

async function pooledApp(url: string, options: { preparedStatements?: PreparedStatements } = {}): Promise<PooledApp> {
  const db = await openDatabase({ databaseUrl: url, dataDir: 'unused', poolSize: 10, ...options });
  return appOnDatabase(db, { DATABASE_URL: url, PRE_AUTH_RATE_LIMIT_PER_MINUTE: '100000' });
}

async function hotPaths(app: PooledApp, tenant: TestTenant, assetIds: string[], i: number) {
  const assetId = assetIds[i % assetIds.length];
  const note = 'pooled test';
  const entries = [1, 2, 3].map((n) => ({ assetId, hoursReading: 100 + i * 3 + n, note }));
  return Promise.all([
    app.api.post('/api/v1/hours/batch', tenant.key, { entries }),
    app.api.post('/api/v1/work-orders', tenant.key, { title: `Pooled ${i}` }),
    app.api.post('/api/v1/hours', tenant.key, {
      assetId: assetIds[(i + 1) % assetIds.length],
      hoursReading: 5_000 + i,
      note,
    }),
  ]);
}

const errorLines = (logs: Record<string, any>[]) => logs.filter((l) => Number(l.level) >= 50);

describe('pooled and direct URLs in the configuration', () => {
  const url = 'postgresql://app@pooler:6432/fleet';
  it('DATABASE_DIRECT_URL is optional, and only beside DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: url })).toMatchObject({ databaseUrl: url, databaseDirectUrl: undefined });
    const direct = 'postgresql://app@db:5432/fleet';
    expect(loadConfig({ DATABASE_URL: url, DATABASE_DIRECT_URL: direct }).databaseDirectUrl).toBe(direct);
    expect(() => loadConfig({ DATABASE_DIRECT_URL: direct })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: url, DATABASE_DIRECT_URL: 'mysql://db/fleet' })).toThrow(ConfigError);
  });
  it('DB_PREPARED_STATEMENTS is auto unless set to true or false', () => {
    expect(loadConfig({}).dbPreparedStatements).toBe('auto');
    expect(loadConfig({ DB_PREPARED_STATEMENTS: 'true' }).dbPreparedStatements).toBe(true);
    expect(loadConfig({ DB_PREPARED_STATEMENTS: 'false' }).dbPreparedStatements).toBe(false);
    expect(() => loadConfig({ DB_PREPARED_STATEMENTS: 'sometimes' })).toThrow(ConfigError);
  });
});

describe.skipIf(!TEST_DATABASE_URL || (!pgbouncerInstalled && !inCI))(
  'behind PgBouncer 1.18 in transaction mode (2 server connections, many clients)',
  () => {
    let bouncer: TestPgBouncer;
    let scratch: ScratchDatabase;
    let pooledUrl: string;
    let direct: pg.Client;

    beforeAll(async () => {
      bouncer = await startPgBouncer(TEST_DATABASE_URL!, 2);
      scratch = await createScratchDatabase(TEST_DATABASE_URL!, 'fleet_pool', inject('postgresTemplate') || undefined);
      pooledUrl = bouncer.urlFor(scratch.url);
      direct = new pg.Client({ connectionString: scratch.url });
      await direct.connect();
    });
    afterAll(async () => {
      await direct?.end();
      await scratch?.drop();
      const log = (await bouncer?.log()) ?? '';
      await bouncer?.stop();
      // PgBouncer 1.18 dies (FATAL) when a cancel request's connection closes before it forwarded it.
      expect(log).not.toMatch(/FATAL/);
    });

    it("two apps' hot paths interleave on shared server connections: no prepared-statement error, no error-level log line", async () => {
      const a = await pooledApp(pooledUrl);
      const b = await pooledApp(pooledUrl);
      try {
        const tenant = await createTenant(a.db);
        const assetIds: string[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await a.api.post('/api/v1/assets', tenant.key, {
            nickname: `Pooled ${i}`,
            assetClass: 'off-road',
          });
          expect(res.statusCode).toBe(201);
          assetIds.push(res.json().assetId);
        }
        // Waves of 4 rounds (12 requests in flight over 2 server connections): interleaved, but not so many that
        // waiting for a server connection on a loaded machine reaches the statement deadline (a fair 503).
        const rounds: Awaited<ReturnType<typeof hotPaths>>[] = [];
        for (let wave = 0; wave < 6; wave++)
          rounds.push(
            ...(await Promise.all(
              [0, 1, 2, 3].map((k) => wave * 4 + k).map((i) => hotPaths(i % 2 ? b : a, tenant, assetIds, i)),
            )),
          );
        const answers = rounds.flat();
        const failed = answers.filter((r) => r.statusCode >= 300).map((r) => `${r.statusCode} ${r.body}`);
        expect(failed).toEqual([]);
        for (const r of rounds.map(([batch]) => batch.json()))
          expect(r.summary).toMatchObject({ received: 3, succeeded: 3, failed: 0 });
        const numbers = (await a.db.sql.query<{ number: number }>('SELECT number FROM work_orders')).map(
          (r) => r.number,
        );
        expect(new Set(numbers).size).toBe(24); // numbering stays gap-free and unique across both apps
        expect([...errorLines(a.logs), ...errorLines(b.logs)]).toEqual([]);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('DB_PREPARED_STATEMENTS=auto: named statements on a direct session, unnamed through the pooler', async () => {
      const onDirect = await openDatabase({ databaseUrl: scratch.url, dataDir: 'unused', poolSize: 1 });
      const onPooler = await openDatabase({ databaseUrl: pooledUrl, dataDir: 'unused', poolSize: 1 });
      try {
        const prepared = async (db: Database) => {
          for (let i = 0; i < 3; i++) await db.sql.query('SELECT $1::int AS one', [1], 'pooler-probe');
          // Through the pooler this reads one of its server sessions: none of them may hold the statement.
          return (await db.sql.query<{ name: string }>('SELECT name FROM pg_prepared_statements')).map((r) => r.name);
        };
        expect(await prepared(onDirect)).toContain('pooler-probe');
        expect(await prepared(onPooler)).not.toContain('pooler-probe');
      } finally {
        await onDirect.close();
        await onPooler.close();
      }
    });

    it('named prepared statements forced on (DB_PREPARED_STATEMENTS=true) fail there: why auto leaves them off', async () => {
      const a = await pooledApp(pooledUrl, { preparedStatements: true });
      const b = await pooledApp(pooledUrl, { preparedStatements: true });
      try {
        const tenant = await createTenant(a.db);
        const assetIds: string[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await a.api.post('/api/v1/assets', tenant.key, {
            nickname: `Named ${i}`,
            assetClass: 'off-road',
          });
          assetIds.push(res.json().assetId);
        }
        const answers = (
          await Promise.all(Array.from({ length: 24 }, (_, i) => hotPaths(i % 2 ? b : a, tenant, assetIds, i)))
        ).flat();
        const bodies = answers.map((r) => r.body).join('\n');
        const logged = JSON.stringify([...errorLines(a.logs), ...errorLines(b.logs)]);
        expect(`${bodies}\n${logged}`).toMatch(/prepared statement \\?"[a-z-]+\\?" (does not exist|already exists)/);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('statement and idle-in-transaction timeouts fire through the pooler, and none leaks into the shared sessions', async () => {
      const timeouts: Partial<DatabaseTimeouts> = { statementMs: 300, idleInTransactionMs: 800, queryMs: 4_000 };
      const db = await openDatabase({ databaseUrl: pooledUrl, dataDir: 'unused', poolSize: 4, timeouts });
      try {
        const cancelled = async (work: Promise<unknown>) => {
          const started = Date.now();
          const err = await work.then(
            () => null,
            (e: unknown) => e,
          );
          expect(err, 'the statement was not cancelled').not.toBeNull();
          expect(isDatabaseUnavailable(err)).toBe(true); // answered 503 database_unavailable
          return Date.now() - started;
        };
        // A statement that commits by itself: the client's CancelRequest, forwarded by PgBouncer.
        expect(await cancelled(db.sql.query('SELECT pg_sleep(3)'))).toBeLessThan(2_000);
        // Inside a raw transaction and inside Prisma's interactive transaction: SET LOCAL statement_timeout.
        expect(await cancelled(db.rawTransaction((c) => c.query('SELECT pg_sleep(3)')))).toBeLessThan(2_000);
        expect(await cancelled(transaction(db, (tx) => tx.$executeRawUnsafe('SELECT pg_sleep(3)')))).toBeLessThan(
          2_000,
        );
        // A transaction left idle: SET LOCAL idle_in_transaction_session_timeout ends it on the server.
        await cancelled(
          db.rawTransaction(async (c) => {
            await c.query('SELECT 1');
            await sleep(1_500);
            await c.query('SELECT 1');
          }),
        );
        // The SET LOCALs ended with their transactions: every shared server session is back at the defaults.
        const settings = await Promise.all(
          Array.from({ length: 8 }, () =>
            db.sql.query<{ s: string; i: string }>(
              `SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i`,
            ),
          ),
        );
        const server = await direct.query(
          `SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i`,
        );
        for (const [row] of settings) expect(row).toEqual(server.rows[0]);
        // And nothing cancelled is still running.
        const running = await direct.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
        );
        expect(running.rows).toEqual([{ n: 0 }]);
      } finally {
        await db.close();
      }
    });

    it('the request deadline cancels a self-committing statement through the pooler: it never commits later', async () => {
      const db = await openDatabase({ databaseUrl: pooledUrl, dataDir: 'unused', poolSize: 2 });
      try {
        await direct.query('CREATE TABLE pool_probe (id int PRIMARY KEY, v int NOT NULL)');
        await direct.query('INSERT INTO pool_probe VALUES (1, 0)');
        // A direct session holds the row's lock, so the pooled UPDATE waits for it.
        await direct.query('BEGIN');
        await direct.query('SELECT * FROM pool_probe WHERE id = 1 FOR UPDATE');
        const scope = newRequestScope();
        const update = runInRequestScope(scope, () => db.sql.query('UPDATE pool_probe SET v = 1 WHERE id = 1'));
        await sleep(300);
        expireRequestScope(scope);
        await expect(update).rejects.toBeInstanceOf(DatabaseUnavailableError);
        await sleep(300);
        await direct.query('COMMIT'); // the lock goes: an UPDATE still waiting at the server would now commit
        await sleep(300);
        expect((await direct.query('SELECT v FROM pool_probe WHERE id = 1')).rows).toEqual([{ v: 0 }]);
      } finally {
        await direct.query('ROLLBACK').catch(() => {});
        await db.close();
      }
    });
  },
);
