import type { Project } from '../../generated/prisma/client.ts';
import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { keysetSql, NEWEST_FIRST } from '../../core/pagination.ts';
import type { CreateProjectInput } from './projects.schemas.ts';

export const duplicateCodeMessage = (code: string) =>
  `A project with code "${code}" already exists in this organisation`;

/**
 * Inserts a project, or returns null when its code is already taken in the organisation. The insert is
 * ON CONFLICT DO NOTHING on the (orgId, code) unique index, so a concurrent create with the same code
 * waits for the other transaction and then reports the duplicate, without aborting the caller's
 * transaction (a batch keeps its other entries). It also sees earlier entries of the same batch.
 */
export async function insertProject(tx: Tx, orgId: string, input: CreateProjectInput): Promise<Project | null> {
  const rows = await tx.project.createManyAndReturn({
    data: [
      {
        orgId,
        name: input.name,
        code: input.code ?? null,
        customerName: input.customerName ?? null,
        status: input.status ?? 'ACTIVE',
        startDate: input.startDate ?? null,
        endDate: input.endDate ?? null,
        hourlyRate: input.hourlyRate ?? null,
        notes: input.notes ?? null,
      },
    ],
    skipDuplicates: true,
  });
  return rows[0] ?? null;
}

export async function codeTakenByOther(tx: Tx, orgId: string, code: string, exceptId: string): Promise<boolean> {
  const other = await tx.project.findFirst({ where: { orgId, code, id: { not: exceptId } }, select: { id: true } });
  return other !== null;
}

/** Newest first, one range per requested status on projects(orgId, status, createdAt, id). */
export async function listProjects(
  sql: SqlRunner,
  orgId: string,
  statuses: readonly string[],
  after: [Date, string] | null,
  take: number,
): Promise<Project[]> {
  const { text, params } = keysetSql({
    from: 'projects',
    where: ['"orgId" = $1'],
    params: [orgId],
    order: NEWEST_FIRST,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take,
    split: { column: 'status', values: statuses },
  });
  return sql.query<Project>(text, params);
}
