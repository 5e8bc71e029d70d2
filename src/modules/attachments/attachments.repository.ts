import type { SqlQuery } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';

export const SUBJECT_TYPES = ['asset', 'flag', 'work_order', 'repair', 'tool'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

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
