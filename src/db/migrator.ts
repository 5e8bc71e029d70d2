import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlRunner } from './database.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));
// Arbitrary constant shared by every process of this service: serialises concurrent start-ups.
const MIGRATION_LOCK_ID = 72_707_341;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      // Prisma Migrate stores the SHA-256 of the file, so `prisma migrate status` agrees with this table.
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {}

/**
 * Applies pending migrations in name order, each in its own transaction, under an advisory lock so
 * several processes starting at once apply each migration exactly once. Returns the names applied.
 */
export async function migrate(sql: SqlRunner, migrations = readMigrations()): Promise<string[]> {
  return sql.withExclusiveLock(MIGRATION_LOCK_ID, async (conn) => {
    await conn.exec(CREATE_TABLE);
    const rows = await conn.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r]));
    const done: string[] = [];
    for (const m of migrations) {
      const prior = applied.get(m.name);
      if (prior) {
        if (!prior.finished_at) throw new MigrationError(`Migration ${m.name} previously failed; resolve it manually`);
        if (prior.checksum !== m.checksum) {
          throw new MigrationError(`Migration ${m.name} was edited after it was applied (checksum mismatch)`);
        }
        continue;
      }
      try {
        await conn.exec(`BEGIN;\n${m.sql}\n;INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
          VALUES ('${randomUUID()}', '${m.checksum}', '${m.name.replace(/'/g, "''")}', now(), 1);\nCOMMIT;`);
      } catch (err) {
        await conn.exec('ROLLBACK').catch(() => {});
        throw new MigrationError(`Migration ${m.name} failed: ${(err as Error).message}`);
      }
      done.push(m.name);
    }
    return done;
  });
}
