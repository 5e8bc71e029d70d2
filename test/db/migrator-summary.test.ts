import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationSummary, readMigrations } from '../../src/db/migrator.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

function collector() {
  const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: object, msg: string) =>
    void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), debug: at('debug') } };
}

describe('migration log', () => {
  it('says how many migrations were applied and how long it took', () => {
    expect(migrationSummary(0, 12)).toBe('database schema up to date (checked in 12 ms)');
    expect(migrationSummary(1, 340)).toBe('applied 1 migration in 340 ms');
    expect(migrationSummary(31, 4_260)).toBe('applied 31 migrations in 4.3 s');
  });

  it('logs one info line per run, and each migration only at debug', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'migs-'));
    try {
      for (const name of ['20990201000000_summary_a', '20990201000001_summary_b']) {
        mkdirSync(path.join(dir, name));
        writeFileSync(path.join(dir, name, 'migration.sql'), `CREATE TABLE ${name.slice(15)} (id int);`);
      }
      const first = collector();
      const applied = await migrate(db.sql, [...readMigrations(), ...readMigrations(dir)], { log: first.log });
      expect(applied).toEqual(['20990201000000_summary_a', '20990201000001_summary_b']);
      const info = first.lines.filter((l) => l.level === 'info');
      expect(info).toHaveLength(1);
      expect(info[0].msg).toMatch(/^applied 2 migrations in \d+(\.\d)? m?s$/);
      expect(info[0].obj).toEqual({ applied: 2, durationMs: expect.any(Number) });
      expect(first.lines.filter((l) => l.level === 'debug').map((l) => l.msg)).toEqual([
        'migration 20990201000000_summary_a applied',
        'migration 20990201000001_summary_b applied',
      ]);

      const again = collector();
      expect(await migrate(db.sql, [...readMigrations(), ...readMigrations(dir)], { log: again.log })).toEqual([]);
      expect(again.lines.map((l) => [l.level, l.msg.replace(/\d+(\.\d)? m?s/, 'T')])).toEqual([
        ['info', 'database schema up to date (checked in T)'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
