// Reading a migration.sql that runs outside a transaction: its statements one by one, and which of them
// PostgreSQL refuses inside a transaction block.

/** First line of a migration that must run outside a transaction (CREATE INDEX CONCURRENTLY and the like). */
export const NO_TRANSACTION_MARKER = '-- migrate:no-transaction';

export function isNoTransaction(sql: string): boolean {
  return (
    sql
      .replace(/^\uFEFF/, '')
      .split('\n', 1)[0]
      .trim() === NO_TRANSACTION_MARKER
  );
}

/**
 * Splits a script into statements at top-level semicolons: quotes, quoted identifiers, dollar-quoted bodies and
 * comments are skipped over. Comment-only pieces are dropped; each statement keeps its own text.
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      // A doubled quote is an escaped quote inside the literal.
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      i = j + 1;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      if (tag) {
        const end = sql.indexOf(tag, i + tag.length);
        i = end < 0 ? sql.length : end + tag.length;
      } else i++;
    } else if (c === ';') {
      out.push(sql.slice(start, i));
      start = ++i;
    } else i++;
  }
  out.push(sql.slice(start));
  return out.map((s) => s.trim()).filter((s) => stripComments(s).trim() !== '');
}

function stripComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}

/** CONCURRENTLY index builds and drops (and the like) refuse to run inside a transaction block. */
export function needsOwnTransaction(statement: string): boolean {
  // Keywords only: literals and quoted identifiers are blanked first.
  const s = stripComments(statement).replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, "''");
  return /\bCONCURRENTLY\b/i.test(s) || /^\s*(VACUUM|CREATE\s+DATABASE|DROP\s+DATABASE)\b/i.test(s);
}

/** The name an index is built under by CREATE INDEX CONCURRENTLY, to find an INVALID leftover of it. */
export function concurrentIndexName(statement: string): { name: string; idempotent: boolean } | null {
  const m =
    /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(IF\s+NOT\s+EXISTS\s+)?(?:"((?:[^"]|"")+)"|([A-Za-z_][\w$]*))/i.exec(
      stripComments(statement),
    );
  if (!m) return null;
  return { name: m[2] !== undefined ? m[2].replace(/""/g, '"') : m[3].toLowerCase(), idempotent: Boolean(m[1]) };
}
