import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrate, MigrationError, readMigrations } from '../../src/db/migrator.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

function migrationsDir(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'migs-'));
  for (const [name, sql] of Object.entries(files)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

describe('migrator', () => {
  it('records every migration in _prisma_migrations with Prisma-compatible checksums and is idempotent', async () => {
    const rows = await db.sql.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name',
    );
    const files = readMigrations();
    expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(files.map((m) => [m.name, m.checksum]));
    expect(rows.every((r) => r.finished_at)).toBe(true);
    expect(await migrate(db.sql)).toEqual([]);
  });

  it('applies new migrations in name order and rolls back a failing one entirely', async () => {
    const dir = migrationsDir({
      '20990101000000_a': 'CREATE TABLE mig_a (id int);',
      '20990101000001_b': 'CREATE TABLE mig_b (id int); INSERT INTO nope VALUES (1);',
    });
    try {
      const all = [...readMigrations(), ...readMigrations(dir)];
      await expect(migrate(db.sql, all)).rejects.toThrow(/20990101000001_b failed/);
      const tables = await db.sql.query<{ t: string }>(
        `SELECT table_name AS t FROM information_schema.tables WHERE table_name LIKE 'mig_%'`,
      );
      expect(tables.map((r) => r.t)).toEqual(['mig_a']);
      expect(await migrate(db.sql, all.slice(0, -1))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to run when an applied migration was edited', async () => {
    const [first, ...rest] = readMigrations();
    await expect(migrate(db.sql, [{ ...first, checksum: 'f'.repeat(64) }, ...rest])).rejects.toBeInstanceOf(
      MigrationError,
    );
  });

  it.skipIf(!onPostgres)('applies each migration once when several processes start at the same time', async () => {
    const fresh = await createTestDatabase();
    try {
      await fresh.sql.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
      const others = await Promise.all(
        [1, 2, 3, 4].map(() => openDatabase({ databaseUrl: fresh.url, dataDir: 'unused', poolSize: 2 })),
      );
      const results = await Promise.all(others.map((o) => migrate(o.sql)));
      expect(results.flat().sort()).toEqual(
        readMigrations()
          .map((m) => m.name)
          .sort(),
      );
      const count = await fresh.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM "_prisma_migrations"');
      expect(count[0].n).toBe(readMigrations().length);
      await Promise.all(others.map((o) => o.close()));
    } finally {
      await fresh.close();
    }
  });
});
