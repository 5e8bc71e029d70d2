import type { Prisma, Project } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { badRequest, notFound, ValidationError } from '../../core/errors.ts';
import { batchSummary, readBatchEnvelope, validateEntries, type BatchResultOf } from '../../core/batch.ts';
import { decodeCursor, newestFirstKey, paginate, timeIdCursor } from '../../core/pagination.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { equipmentUsage } from './project-usage.repository.ts';
import type { EquipmentUsagePage } from './project-usage.schemas.ts';
import { codeTakenByOther, duplicateCodeMessage, insertProject, listProjects } from './projects.repository.ts';
import {
  CreateProjectBody,
  toProjectRow,
  UPDATABLE_PROJECT_FIELDS,
  type CreateProjectInput,
  type UpdateProjectInput,
  type ProjectBatchResponse,
} from './projects.schemas.ts';

export const PROJECT_BATCH_CAP = 50;

type BatchResult = BatchResultOf<typeof ProjectBatchResponse>;

const duplicateCodeOnCreate = (code: string) =>
  new ValidationError({ code: 'a project with this code already exists' }, duplicateCodeMessage(code));
// The spec makes a code clash on PATCH a 400 (not a 422 like on create).
const duplicateCodeOnUpdate = (code: string) => badRequest('duplicate_code', duplicateCodeMessage(code));

/** A batch entry's formError: one sentence naming what is wrong with the entry as a whole. */
function formErrorOf(fieldErrors: Record<string, string>): string {
  const parts = Object.entries(fieldErrors).map(([field, message]) =>
    field === 'body' ? `the entry: ${message}` : `${field} ${message}`,
  );
  return `The project could not be created: ${parts.join('; ')}.`;
}

export function createProjectService({ db }: Pick<ServiceDeps, 'db'>) {
  async function findOwned(tx: Tx, ctx: RequestContext, id: string): Promise<Project> {
    const project = await tx.project.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!project) throw notFound('Project');
    return project;
  }

  return {
    async list(ctx: RequestContext, query: { status: string[]; limit: number; cursor?: string }) {
      const rows = await listProjects(
        db.sql,
        ctx.orgId,
        query.status,
        timeIdCursor(decodeCursor(query.cursor, 2)),
        query.limit + 1,
      );
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, projects: page.map(toProjectRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreateProjectInput) {
      const project = await transaction(db, (tx) => insertProject(tx, ctx.orgId, input));
      if (!project) throw duplicateCodeOnCreate(input.code as string);
      return { ok: true as const, projectId: project.id };
    },

    /**
     * Entries are validated one by one; a duplicate code (in the organisation or earlier in the batch) fails
     * only its entry.
     */
    async createBatch(ctx: RequestContext, body: unknown) {
      const entries = readBatchEnvelope(body, PROJECT_BATCH_CAP);
      const { valid, failures } = validateEntries(entries, CreateProjectBody);
      const results: BatchResult[] = failures.map((f) => ({ ...f, formError: formErrorOf(f.fieldErrors) }));
      await transaction(db, async (tx) => {
        for (const { index, data } of valid) {
          const project = await insertProject(tx, ctx.orgId, data);
          if (project) {
            results.push({ index, ok: true, projectId: project.id });
          } else {
            const err = duplicateCodeOnCreate(data.code as string);
            results.push({
              index,
              ok: false,
              error: 'validation_failed',
              fieldErrors: err.fieldErrors,
              formError: err.message,
            });
          }
        }
      });
      results.sort((a, b) => a.index - b.index);
      return { ok: true as const, results, summary: batchSummary(entries.length, results) };
    },

    async get(ctx: RequestContext, id: string) {
      return { ok: true as const, project: toProjectRow(await findOwned(db.prisma, ctx, id)) };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateProjectInput) {
      const fields = UPDATABLE_PROJECT_FIELDS.filter((f) => patch[f] !== undefined);
      if (fields.length === 0) {
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_PROJECT_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      }
      try {
        await transaction(db, async (tx) => {
          const before = await findOwned(tx, ctx, id);
          const startDate = patch.startDate !== undefined ? patch.startDate : before.startDate;
          const endDate = patch.endDate !== undefined ? patch.endDate : before.endDate;
          if (startDate && endDate && endDate < startDate)
            throw new ValidationError({ endDate: 'cannot be before startDate' });
          if (patch.code && patch.code !== before.code && (await codeTakenByOther(tx, ctx.orgId, patch.code, id))) {
            throw duplicateCodeOnUpdate(patch.code);
          }
          const data: Prisma.ProjectUncheckedUpdateInput = {};
          for (const field of fields) (data as Record<string, unknown>)[field] = patch[field];
          await tx.project.update({ where: { id: before.id }, data });
        });
      } catch (err) {
        // Another request took the code between our check and our write.
        if (isUniqueViolation(err) && patch.code) throw duplicateCodeOnUpdate(patch.code);
        throw err;
      }
      return { ok: true as const, projectId: id };
    },

    async equipmentUsage(ctx: RequestContext, id: string, page: EquipmentUsagePage) {
      const project = await findOwned(db.prisma, ctx, id);
      return { ok: true as const, usage: await equipmentUsage(db.sql, project, page) };
    },
  };
}

export type ProjectService = ReturnType<typeof createProjectService>;
