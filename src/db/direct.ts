import { openDatabase, waitForDatabase, type Database, type DatabaseTimeouts, type SqlRunner } from './database.ts';
import { migrate } from './migrator.ts';

export interface MigrateOptions {
  /**
   * DATABASE_DIRECT_URL: a direct session to the same database. Migrations and their lock run there (DDL and a
   * lock held across transactions want one server session, which a transaction pooler does not keep); without it
   * they run through `db`, whose lock must then be pooler-safe (migrator.ts).
   */
  directUrl?: string;
  timeouts?: Partial<DatabaseTimeouts>;
  /** As waitForDatabase's: the direct connection may not be reachable yet at start-up either. */
  startupTimeoutMs?: number;
  onRetry?: (info: { attempt: number; reason: string; retryInMs: number }) => void;
  /** How to migrate on the runner chosen (default: migrate() with its defaults). */
  run?: (sql: SqlRunner) => Promise<string[]>;
}

/**
 * Applies pending migrations (the names applied are returned): on a one-connection pool of the direct URL, closed
 * afterwards, when one is given; otherwise on the application's database.
 */
export async function migrateDatabase(db: Database, options: MigrateOptions = {}): Promise<string[]> {
  const run = options.run ?? ((sql: SqlRunner) => migrate(sql));
  if (!options.directUrl || db.kind !== 'postgresql') return run(db.sql);
  const direct = await openDatabase({
    databaseUrl: options.directUrl,
    dataDir: 'unused',
    poolSize: 1,
    timeouts: options.timeouts,
  });
  try {
    await waitForDatabase(direct, { timeoutMs: options.startupTimeoutMs ?? 0, onRetry: options.onRetry });
    return await run(direct.sql);
  } finally {
    await direct.close();
  }
}
