import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { ApiKeyRecord } from './api-keys.schemas.ts';

// Never the hash: summaries are built from these columns only.
const SUMMARY = `k.id, k.label, k.scopes, k."createdAt", k."lastUsedAt", k."expiresAt", k."revokedAt",
  k."rateLimitPerMinute", k."rolledFromId", u.id AS "creatorId", u.name AS "creatorName", u.email AS "creatorEmail"
  FROM api_keys k LEFT JOIN users u ON u.id = k."createdById" AND u."orgId" = k."orgId"`;

/** Keys of the organisation newest first, on the (orgId, createdAt, id) index; `after` is the last row's key. */
export function listApiKeyRows(
  sql: SqlRunner,
  orgId: string,
  after: [Date, string] | null,
  take: number,
): Promise<ApiKeyRecord[]> {
  if (!after) {
    return sql.query<ApiKeyRecord>(
      `SELECT ${SUMMARY} WHERE k."orgId" = $1 ORDER BY k."createdAt" DESC, k.id DESC LIMIT $2`,
      [orgId, take],
    );
  }
  return sql.query<ApiKeyRecord>(
    `SELECT ${SUMMARY} WHERE k."orgId" = $1 AND (k."createdAt", k.id) < ($2::timestamptz, $3)
     ORDER BY k."createdAt" DESC, k.id DESC LIMIT $4`,
    [orgId, after[0].toISOString(), after[1], take],
  );
}

export async function findApiKeyRow(sql: SqlRunner, orgId: string, id: string): Promise<ApiKeyRecord | null> {
  const rows = await sql.query<ApiKeyRecord>(`SELECT ${SUMMARY} WHERE k."orgId" = $1 AND k.id = $2`, [orgId, id]);
  return rows[0] ?? null;
}

/** The key of the organisation under a row lock until the transaction ends (rolls and revocations serialise on it). */
export async function lockApiKey(tx: Tx, orgId: string, id: string) {
  const locked = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM api_keys WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  return locked.length === 0 ? null : tx.apiKey.findUniqueOrThrow({ where: { id } });
}
