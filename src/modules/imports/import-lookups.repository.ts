// Lookups of a batch of import rows, one query per batch of keys: the records rows match or refer to.
import type { Database, SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { Asset } from '../../generated/prisma/client.ts';
import type { AssetMatch } from './imports.schemas.ts';

const REFERENCE_TABLES = {
  yard: 'SELECT id FROM yards WHERE "orgId" = $1 AND id = ANY($2::text[])',
  asset: 'SELECT id FROM assets WHERE "orgId" = $1 AND id = ANY($2::text[])',
  user: 'SELECT id FROM users WHERE "orgId" = $1 AND id = ANY($2::text[]) AND "removedAt" IS NULL',
  project: 'SELECT id FROM projects WHERE "orgId" = $1 AND id = ANY($2::text[])',
  tool: 'SELECT id FROM tools WHERE "orgId" = $1 AND id = ANY($2::text[])',
} as const;
export type ReferenceTable = keyof typeof REFERENCE_TABLES;

type IdQuery = (text: string, orgId: string, ids: string[]) => Promise<{ id: string }[]>;

async function idsOf(query: IdQuery, kind: ReferenceTable, orgId: string, ids: Iterable<string>) {
  const list = [...new Set(ids)];
  if (list.length === 0) return new Set<string>();
  return new Set((await query(REFERENCE_TABLES[kind], orgId, list)).map((r) => r.id));
}

/** Which of the ids are records of the organisation. */
export function existingIds(
  sql: SqlRunner,
  kind: ReferenceTable,
  orgId: string,
  ids: Iterable<string>,
): Promise<Set<string>> {
  return idsOf((text, org, list) => sql.query<{ id: string }>(text, [org, list]), kind, orgId, ids);
}

/** existingIds inside a transaction: what a batch of rows refers to, checked again as it is written. */
export function existingIdsIn(
  tx: Tx,
  kind: ReferenceTable,
  orgId: string,
  ids: Iterable<string>,
): Promise<Set<string>> {
  return idsOf((text, org, list) => tx.$queryRawUnsafe<{ id: string }[]>(text, org, list), kind, orgId, ids);
}

/** The fuel cards of the organisation among `cards`, and every card of the assets `assetIds`, with their asset. */
export function fuelCardsOf(sql: SqlRunner, orgId: string, cards: Iterable<string>, assetIds: Iterable<string>) {
  return sql.query<{ cardNumber: string; assetId: string }>(
    `SELECT "cardNumber", "assetId" FROM asset_fuel_cards
     WHERE "orgId" = $1 AND ("cardNumber" = ANY($2::text[]) OR "assetId" = ANY($3::text[]))`,
    [orgId, [...new Set(cards)], [...new Set(assetIds)]],
  );
}

const MATCH_COLUMNS: Record<AssetMatch, string> = {
  vin: 'vin',
  serial: 'serial',
  customerAssetNumber: '"customerAssetNumber"',
  nickname: 'nickname',
};

/**
 * Assets whose match column equals one of the keys (compared without case), grouped by lower-case key. Read
 * through Prisma: the rows are compared field by field with what a row would set (decimals as decimals).
 */
export async function assetsByMatch(
  db: Database,
  orgId: string,
  match: AssetMatch,
  keys: Iterable<string>,
): Promise<Map<string, Asset[]>> {
  const list = [...new Set([...keys].map((k) => k.toLowerCase()))];
  const out = new Map<string, Asset[]>();
  if (list.length === 0) return out;
  const column = MATCH_COLUMNS[match];
  const keyed = await db.sql.query<{ id: string; matchKey: string }>(
    `SELECT id, lower(${column}) AS "matchKey" FROM assets WHERE "orgId" = $1 AND lower(${column}) = ANY($2::text[])`,
    [orgId, list],
  );
  const byId = await assetsById(
    db,
    orgId,
    keyed.map((k) => k.id),
  );
  for (const { id, matchKey } of keyed) {
    const row = byId.get(id);
    if (!row) continue;
    const group = out.get(matchKey) ?? [];
    group.push(row);
    out.set(matchKey, group);
  }
  return out;
}

export async function assetsById(db: Database, orgId: string, ids: Iterable<string>): Promise<Map<string, Asset>> {
  const list = [...new Set(ids)];
  if (list.length === 0) return new Map();
  const rows = await db.prisma.asset.findMany({ where: { orgId, id: { in: list } } });
  return new Map(rows.map((r) => [r.id, r]));
}
