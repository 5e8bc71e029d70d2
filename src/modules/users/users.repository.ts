import type { SqlRunner } from '../../db/database.ts';
import type { UserRecord } from './users.schemas.ts';

/**
 * At most this many people are examined per page. Listing walks the (orgId, email) unique index in order;
 * `q` and the removed filter cannot use an index (substring match), so the walk is bounded instead and the
 * next page continues where it stopped.
 */
export const USER_SCAN_CAP = 2_000;

export interface UserScan {
  hits: UserRecord[];
  /** How many index rows the walk examined, and the email of the last one. */
  scanned: number;
  lastScannedEmail: string | null;
}

/** People of the organisation by email after `afterEmail`, up to `take` matches within the scan cap. */
export async function scanUsers(
  sql: SqlRunner,
  orgId: string,
  opts: { afterEmail: string | null; q: string | null; includeRemoved: boolean; take: number; cap?: number },
): Promise<UserScan> {
  const rows = await sql.query<UserRecord & { scanned: number; lastScanned: string | null }>(
    `WITH scanned AS MATERIALIZED (
       SELECT id, name, email, "createdAt", "removedAt" FROM users
       WHERE "orgId" = $1 AND ($2::text IS NULL OR email > $2::text)
       ORDER BY email LIMIT $3
     ), meta AS (SELECT count(*)::int AS scanned, max(email) AS "lastScanned" FROM scanned)
     SELECT meta.scanned, meta."lastScanned", h.id, h.name, h.email, h."createdAt", h."removedAt"
     FROM meta LEFT JOIN LATERAL (
       SELECT * FROM scanned
       WHERE ($4::boolean OR "removedAt" IS NULL)
         AND ($5::text IS NULL OR strpos(lower(email), lower($5::text)) > 0 OR strpos(lower(coalesce(name, '')), lower($5::text)) > 0)
       ORDER BY email LIMIT $6
     ) h ON true`,
    [orgId, opts.afterEmail, opts.cap ?? USER_SCAN_CAP, opts.includeRemoved, opts.q, opts.take],
  );
  const first = rows[0];
  return {
    hits: rows
      .filter((r) => r.id !== null)
      .map(({ id, name, email, createdAt, removedAt }) => ({
        id,
        name,
        email,
        createdAt: new Date(createdAt),
        removedAt: removedAt ? new Date(removedAt) : null,
      })),
    scanned: first?.scanned ?? 0,
    lastScannedEmail: first?.lastScanned ?? null,
  };
}
