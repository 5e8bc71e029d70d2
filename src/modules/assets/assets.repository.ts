import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { Asset } from '../../generated/prisma/client.ts';
import { isoText } from '../../db/utc-text.ts';

/**
 * The asset list is the hottest read of the API, and Prisma's driver adapter adds CPU to every query, so this
 * one query goes straight to the driver (docs/adr/0006-raw-sql-reading-path.md). The drift test
 * keeps these column names honest. The database's labels of AssetClass are the wire names (schema.prisma @map).
 */
export type AssetRowRecord = Pick<
  Asset,
  | 'id'
  | 'nickname'
  | 'customerAssetNumber'
  | 'vin'
  | 'serial'
  | 'meterType'
  | 'meterUnit'
  | 'lifecycleStatus'
  | 'yardId'
> & {
  assetClass: 'on-road' | 'off-road' | 'trailer';
  /** ISO 8601 text (isoText): the page is written as JSON, so its dates are never needed as Date objects. */
  createdAt: string;
  updatedAt: string;
};

// The row is the wire shape (AssetRow), in its field order: the page goes to the response serialiser as the
// driver returns it, with no object or date string made per row in JavaScript (less CPU and less garbage).
const COLUMNS = `id, nickname, "customerAssetNumber", "assetClass", vin, serial, "meterType",
  "meterUnit", "lifecycleStatus", "yardId", ${isoText('"createdAt"')} AS "createdAt",
  ${isoText('"updatedAt"')} AS "updatedAt"`;

/**
 * Newest first; `after` is the (createdAt, id) of the last row of the previous page. ORDER BY names the table's
 * columns: unqualified, "createdAt" would be the text alias of the select list, sorted as text without the index.
 */
export async function listAssetRows(
  sql: SqlRunner,
  orgId: string,
  after: [Date, string] | null,
  take: number,
): Promise<AssetRowRecord[]> {
  if (!after) {
    return sql.query<AssetRowRecord>(
      `SELECT ${COLUMNS} FROM assets WHERE "orgId" = $1 ORDER BY assets."createdAt" DESC, assets.id DESC LIMIT $2`,
      [orgId, take],
    );
  }
  return sql.query<AssetRowRecord>(
    `SELECT ${COLUMNS} FROM assets WHERE "orgId" = $1 AND ("createdAt", id) < ($2::timestamptz, $3)
     ORDER BY assets."createdAt" DESC, assets.id DESC LIMIT $4`,
    [orgId, after[0].toISOString(), after[1], take],
  );
}

/**
 * The asset of the organisation, read under a row lock held until the transaction ends (null when there is
 * none). Every write that decides from the asset's current state takes it first: PATCH (changedFields),
 * checkout and check-in, meter readings (hours.repository reads its columns under the same lock) and the
 * resolution of AUTO_PM flags, so none of them can interleave on one asset.
 */
export async function lockOwnedAsset(tx: Tx, orgId: string, id: string): Promise<Asset | null> {
  const locked = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM assets WHERE id = ${id} AND "orgId" = ${orgId} FOR NO KEY UPDATE`;
  return locked.length === 0 ? null : tx.asset.findFirst({ where: { id, orgId } });
}

/** The lock of lockOwnedAssets alone, for a writer that needs no column of the assets. */
export async function lockAssetIds(tx: Tx, orgId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.$queryRawUnsafe(
    `SELECT id FROM assets WHERE "orgId" = $1 AND id = ANY($2::text[]) ORDER BY id FOR NO KEY UPDATE`,
    orgId,
    ids,
  );
}

/**
 * lockOwnedAsset for several assets, locked in id order (two writers never wait on each other in a cycle); a
 * NO KEY lock, so a row inserted meanwhile that refers to one of them (its foreign-key check) does not wait on it.
 */
export async function lockOwnedAssets(tx: Tx, orgId: string, ids: string[]): Promise<Map<string, Asset>> {
  if (ids.length === 0) return new Map();
  await lockAssetIds(tx, orgId, ids);
  const rows = await tx.asset.findMany({ where: { orgId, id: { in: ids } } });
  return new Map(rows.map((r) => [r.id, r]));
}
