import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db/test-database.ts';

/**
 * Proves the hand-written SQL migrations produce exactly the database the Prisma schema describes:
 * tables, columns, types, nullability, enums, indexes (unique and plain) and foreign keys. The expected
 * side comes from Prisma's own schema parser (DMMF), so the two can never drift unnoticed.
 */
const require = createRequire(import.meta.url);
const wasm = require('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string };
const schema = readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8');

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: string;
  type: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: schema }))).datamodel as {
  models: DmmfModel[];
  enums: { name: string; dbName: string | null; values: { name: string; dbName: string | null }[] }[];
  indexes: { model: string; type: 'id' | 'unique' | 'normal'; dbName?: string | null; fields: { name: string }[] }[];
};

const tableOf = (model: string) => {
  const m = dmmf.models.find((x) => x.name === model)!;
  return m.dbName ?? m.name;
};
const enumDbName = (name: string) => {
  const e = dmmf.enums.find((x) => x.name === name)!;
  return e.dbName ?? e.name;
};

function expectedType(f: DmmfField): string {
  const base =
    f.kind === 'enum'
      ? enumDbName(f.type)
      : f.type === 'String'
        ? 'text'
        : f.type === 'Int'
          ? 'int4'
          : f.type === 'Float'
            ? 'float8'
            : f.type === 'Boolean'
              ? 'bool'
              : f.type === 'Decimal'
                ? 'numeric'
                : f.type === 'Json'
                  ? 'jsonb'
                  : f.type === 'DateTime'
                    ? f.nativeType?.[0] === 'Timestamptz'
                      ? 'timestamptz'
                      : 'timestamp'
                    : `unmapped:${f.type}`;
  return f.isList ? `_${base}` : base;
}

/**
 * Index keys that the migrations write as an expression over a column, which the schema can only name by the
 * column: index name -> those columns. The queue indexes key the due date as a descending expression
 * (migration 20261124120000_work_order_queue_key); test/db/list-plans.test.ts proves the queries match it.
 */
const EXPRESSION_KEYS: Record<string, string[]> = {
  // Telematics matching: lower(btrim(vin)) and lower(btrim(serial)) (migration 20261127130100_asset_match_keys).
  assets_orgId_vin_match_idx: ['vin'],
  assets_orgId_serial_match_idx: ['serial'],
  // Vendor names are unique and listed case-folded: lower(name) (migration 20261129110000_purchasing).
  vendors_orgId_name_active_key: ['name'],
  vendors_orgId_name_idx: ['name'],
  // Part numbers: lower(number) (migration 20261129100000_parts_inventory).
  parts_orgId_number_key: ['number'],
  work_orders_status_queue_idx: ['dueAt'],
  work_orders_active_queue_idx: ['dueAt'],
  work_orders_asset_queue_idx: ['dueAt'],
  work_orders_assignee_queue_idx: ['dueAt'],
};

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

describe('migrations match prisma/schema.prisma', () => {
  it('tables', async () => {
    const rows = await db.sql.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'
         AND table_name::text NOT IN (SELECT relname FROM pg_class WHERE relispartition)`,
    );
    expect(rows.map((r) => r.table_name).sort()).toEqual(dmmf.models.map((m) => m.dbName ?? m.name).sort());
  });

  it('columns: names, types and nullability', async () => {
    const rows = await db.sql.query<{ table_name: string; column_name: string; udt_name: string; is_nullable: string }>(
      `SELECT table_name, column_name, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
         AND table_name::text NOT IN (SELECT relname FROM pg_class WHERE relispartition)`,
    );
    const actual = rows
      .map((r) => `${r.table_name}.${r.column_name}: ${r.udt_name}${r.is_nullable === 'YES' ? '?' : ''}`)
      .sort();
    const expected = dmmf.models
      .flatMap((m) =>
        m.fields
          .filter((f) => f.kind !== 'object')
          .map(
            (f) =>
              `${m.dbName ?? m.name}.${f.dbName ?? f.name}: ${expectedType(f)}${f.isRequired || f.isList ? '' : '?'}`,
          ),
      )
      .sort();
    expect(actual).toEqual(expected);
  });

  it('enums and their values, in order', async () => {
    const rows = await db.sql.query<{ typname: string; labels: string[] | string }>(
      `SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS labels
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
    );
    const parse = (l: string[] | string) =>
      Array.isArray(l)
        ? l
        : l
            .replace(/^{|}$/g, '')
            .split(',')
            .map((s) => s.replace(/^"|"$/g, ''));
    const actual = Object.fromEntries(rows.map((r) => [r.typname, parse(r.labels)]));
    const expected = Object.fromEntries(
      dmmf.enums.map((e) => [e.dbName ?? e.name, e.values.map((v) => v.dbName ?? v.name)]),
    );
    expect(actual).toEqual(expected);
  });

  it('indexes: unique and plain, with their columns', async () => {
    // An expression key (attnum 0) reads as "expr(<the table's columns it names>)"; a lower-case column name is
    // not quoted in the expression, so its words outside string literals are checked against the table's columns.
    const rows = await db.sql.query<{ tbl: string; unique: boolean; primary: boolean; cols: string; tcols: string }>(
      `SELECT c.relname AS tbl, i.indisunique AS unique, i.indisprimary AS primary,
              (SELECT string_agg(a.attname::text, '|') FROM pg_attribute a
               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS tcols,
              (SELECT string_agg(COALESCE(a.attname::text, 'expr:' || pg_get_indexdef(i.indexrelid, k.ord::int, true)), '|' ORDER BY k.ord)
               FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
               LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum AND k.attnum <> 0) AS cols
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relname <> '_prisma_migrations' AND NOT c.relispartition`,
    );
    const key = (k: string, columns: Set<string>) =>
      k.startsWith('expr:')
        ? `expr(${[...k.replace(/'(?:[^']|'')*'/g, '').matchAll(/"(\w+)"|\b(\w+)\b(?!\s*\()/g)]
            .map((m) => m[1] ?? m[2])
            .filter((w) => columns.has(w))
            .join(',')})`
        : k;
    const actual = rows
      .map((r) => {
        const columns = new Set(r.tcols.split('|'));
        const cols = r.cols
          .split('|')
          .map((k) => key(k, columns))
          .join(',');
        return `${r.tbl}(${cols}) ${r.primary ? 'primary' : r.unique ? 'unique' : 'index'}`;
      })
      .sort();
    const expected = [
      ...dmmf.indexes.map(
        (ix) =>
          `${tableOf(ix.model)}(${ix.fields.map((f) => (EXPRESSION_KEYS[ix.dbName ?? '']?.includes(f.name) ? `expr(${f.name})` : f.name)).join(',')}) ${ix.type === 'id' ? 'primary' : ix.type === 'unique' ? 'unique' : 'index'}`,
      ),
    ].sort();
    expect(actual).toEqual(expected);
  });

  it('foreign keys and their delete rules', async () => {
    const rows = await db.sql.query<{ tbl: string; cols: string; ref: string; refcols: string; del: string }>(
      `SELECT c.conrelid::regclass::text AS tbl, c.confrelid::regclass::text AS ref, c.confdeltype AS del,
              (SELECT string_agg(a.attname, ',') FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k) AS cols,
              (SELECT string_agg(a.attname, ',') FROM unnest(c.confkey) k JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k) AS refcols
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = 'public' AND c.conparentid = 0`,
    );
    const rule: Record<string, string> = { c: 'Cascade', n: 'SetNull', r: 'Restrict', a: 'NoAction', d: 'SetDefault' };
    const actual = rows
      .map(
        (r) =>
          `${r.tbl.replace(/"/g, '')}(${r.cols}) -> ${r.ref.replace(/"/g, '')}(${r.refcols}) on delete ${rule[r.del]}`,
      )
      .sort();
    const expected = dmmf.models
      .flatMap((m) =>
        m.fields
          .filter((f) => f.kind === 'object' && f.relationFromFields?.length)
          .map(
            (f) =>
              `${m.dbName ?? m.name}(${f.relationFromFields!.join(',')}) -> ${tableOf(f.type)}(${f.relationToFields!.join(',')}) on delete ${f.relationOnDelete ?? (f.isRequired ? 'Restrict' : 'SetNull')}`,
          ),
      )
      .sort();
    expect(actual).toEqual(expected);
  });
});
