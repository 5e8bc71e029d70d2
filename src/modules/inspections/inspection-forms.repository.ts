import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { InspectionForm, InspectionFormVersion } from '../../generated/prisma/client.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { ListInspectionFormsInput } from './inspection-forms.schemas.ts';

/** Newest first, one range of inspection_forms(orgId, status, createdAt, id) per requested status. */
export function listInspectionForms(
  sql: SqlRunner,
  orgId: string,
  query: ListInspectionFormsInput,
  after: [Date, string] | null,
): Promise<InspectionForm[]> {
  const { text, params } = keysetSql({
    from: 'inspection_forms',
    where: ['"orgId" = $1'],
    params: [orgId],
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
    split: { column: 'status', values: query.status },
  });
  return sql.query<InspectionForm>(text, params);
}

/** The given versions of forms, in one query (a list page's current versions). */
export function formVersions(
  tx: Tx,
  wanted: { formId: string; version: number }[],
): Promise<Pick<InspectionFormVersion, 'formId' | 'version' | 'items'>[]> {
  if (wanted.length === 0) return Promise.resolve([]);
  return tx.inspectionFormVersion.findMany({
    where: { OR: wanted.map((w) => ({ formId: w.formId, version: w.version })) },
    select: { formId: true, version: true, items: true },
  });
}

/** The form of the organisation under a row lock (its changes and the submissions against it queue), or null. */
export async function lockOwnedForm(tx: Tx, orgId: string, id: string): Promise<InspectionForm | null> {
  const locked = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM inspection_forms WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  return locked.length === 0 ? null : tx.inspectionForm.findFirst({ where: { id, orgId } });
}
