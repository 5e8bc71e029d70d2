import type { SqlQuery } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';

import type { Attachment } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import { SUBJECT_TABLES, type SubjectType } from './attachment-types.rules.ts';

export { SUBJECT_TYPES, type SubjectType } from './attachment-types.rules.ts';

/** What another record needs to show an attachment it names. */
export interface ReadyAttachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  caption: string | null;
  createdAt: Date;
}

/**
 * The READY attachments among `ids` that belong to the given subject of the organisation, in no particular
 * order; ids that are missing, PENDING, of another subject or of another organisation are simply absent, so the
 * caller compares lengths to refuse them. Works inside a Prisma transaction or on a raw SQL runner.
 */
export async function findReadyAttachments(
  tx: Tx | SqlQuery,
  orgId: string,
  subjectType: SubjectType,
  subjectId: string,
  ids: string[],
): Promise<ReadyAttachment[]> {
  if (ids.length === 0) return [];
  const text =
    'SELECT "id", "filename", "contentType", "size", "sha256", "caption", "createdAt" FROM "attachments" ' +
    'WHERE "orgId" = $1 AND "subjectType" = $2 AND "subjectId" = $3 AND "id" = ANY($4::text[]) AND "status" = \'READY\'';
  const params = [orgId, subjectType, subjectId, ids];
  if ('query' in tx && typeof tx.query === 'function') return tx.query<ReadyAttachment>(text, params);
  return (tx as Tx).$queryRawUnsafe<ReadyAttachment[]>(text, ...params);
}

/**
 * One page of a record's attachments, newest first, and whether the record exists in the organisation, in one
 * statement: the page is a range of attachments(orgId, subjectType, subjectId, createdAt, id) and the record a
 * primary-key probe. Null when the record does not exist.
 */
export async function listAttachments(
  sql: SqlRunner,
  orgId: string,
  subjectType: SubjectType,
  subjectId: string,
  after: [Date, string] | null,
  take: number,
): Promise<Attachment[] | null> {
  const { text, params } = keysetSql({
    from: 'attachments',
    where: ['"orgId" = $1', '"subjectType" = $2', '"subjectId" = $3'],
    params: [orgId, subjectType, subjectId],
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take,
  });
  const subject = `SELECT 1 FROM "${SUBJECT_TABLES[subjectType]}" WHERE "id" = $3 AND "orgId" = $1`;
  const rows = await sql.query<Attachment & { subjectFound: boolean }>(
    `SELECT EXISTS (${subject}) AS "subjectFound", page.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (${text}) AS page ON true`,
    params,
  );
  if (!rows[0]?.subjectFound) return null;
  return rows.filter((r) => r.id !== null);
}

/**
 * Whether the subject exists in the organisation (every subject table has id and orgId). Inside a transaction the
 * row stays locked against deletion until it ends, so a new attachment cannot outlive its subject.
 */
export async function subjectExists(tx: Tx, orgId: string, type: SubjectType, id: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM "${SUBJECT_TABLES[type]}" WHERE "id" = $1 AND "orgId" = $2 FOR KEY SHARE`,
    id,
    orgId,
  );
  return rows.length > 0;
}

/** Bytes the organisation holds or has reserved (PENDING uploads at their declared size). */
export async function bytesUsed(tx: Tx, orgId: string): Promise<number> {
  const [row] = await tx.$queryRawUnsafe<{ used: number }[]>(
    'SELECT COALESCE(SUM("size"), 0)::float8 AS used FROM "attachments" WHERE "orgId" = $1',
    orgId,
  );
  return row?.used ?? 0;
}

/**
 * Serialises the writers of one storage key (a content-addressed key is shared by every row with the same bytes):
 * moving bytes into place with their row, and deleting the last row with its bytes, never interleave.
 */
export async function lockKey(tx: Tx, key: string): Promise<void> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 40))', `attachment-key:${key}`);
}

/** Serialises quota checks of one organisation's uploads. */
export async function lockQuota(tx: Tx, orgId: string): Promise<void> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 40))', `attachment-quota:${orgId}`);
}

export async function keyInUse(tx: Tx, key: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>('SELECT 1 FROM "attachments" WHERE "storageKey" = $1 LIMIT 1', key);
  return rows.length > 0;
}
