import { describe, expect, it } from 'vitest';
import {
  concurrentIndexName,
  isNoTransaction,
  needsOwnTransaction,
  splitStatements,
} from '../../src/db/migration-sql.ts';

describe('no-transaction migrations: reading the file', () => {
  it('finds the marker on the first line only', () => {
    expect(isNoTransaction('-- migrate:no-transaction\nCREATE INDEX CONCURRENTLY …')).toBe(true);
    expect(isNoTransaction('-- a comment\n-- migrate:no-transaction\n')).toBe(false);
  });

  it('splits at top-level semicolons, not inside literals, identifiers, dollar quotes or comments', () => {
    const sql = `-- migrate:no-transaction
-- comment; still a comment
INSERT INTO t VALUES ('a;b', 'it''s; fine');
CREATE INDEX CONCURRENTLY IF NOT EXISTS "odd;name" ON t (c);
/* block; comment */
DO $body$ BEGIN PERFORM 1; END $body$;
-- trailing comment only`;
    expect(splitStatements(sql)).toEqual([
      "-- migrate:no-transaction\n-- comment; still a comment\nINSERT INTO t VALUES ('a;b', 'it''s; fine')",
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS "odd;name" ON t (c)',
      '/* block; comment */\nDO $body$ BEGIN PERFORM 1; END $body$',
    ]);
  });

  it('names the index a concurrent build creates and whether it is re-runnable', () => {
    expect(concurrentIndexName('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "A""b" ON t (c)')).toEqual({
      name: 'A"b',
      idempotent: true,
    });
    expect(concurrentIndexName('-- x\ncreate index concurrently Foo on t (c)')).toEqual({
      name: 'foo',
      idempotent: false,
    });
    expect(concurrentIndexName('CREATE INDEX foo ON t (c)')).toBeNull();
    expect(needsOwnTransaction('DROP INDEX CONCURRENTLY IF EXISTS foo')).toBe(true);
    expect(needsOwnTransaction("ALTER TABLE t ADD COLUMN c text DEFAULT 'CONCURRENTLY'")).toBe(false);
  });
});
