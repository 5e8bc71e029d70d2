import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { decodeCursor, keysetSql, paginate } from '../../core/pagination.ts';
import { ValidationError } from '../../core/errors.ts';
import { transaction } from '../../db/transaction.ts';
import type { ServiceTask } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { toServiceTaskRow, type CreateServiceTaskInput, type UpdateServiceTaskInput } from './service-tasks.schemas.ts';

function nameCursor(values: (string | number | null)[] | null): [string, string] | null {
  if (!values) return null;
  const [name, id] = values;
  if (typeof name !== 'string' || typeof id !== 'string')
    throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
  return [name, id];
}

export function createServiceTaskService({ db }: Pick<ServiceDeps, 'db'>) {
  async function usage(id: string) {
    const [reminderCount, programItemCount] = await Promise.all([
      db.prisma.serviceReminder.count({ where: { serviceTaskId: id } }),
      db.prisma.serviceProgramItem.count({ where: { serviceTaskId: id } }),
    ]);
    return { reminderCount, programItemCount };
  }

  return {
    /** Alphabetical (name, id) on service_tasks(orgId, name, id). */
    async list(ctx: RequestContext, query: { limit: number; cursor?: string }) {
      const { text, params } = keysetSql({
        from: 'service_tasks',
        where: ['"orgId" = $1'],
        params: [ctx.orgId],
        order: [{ column: 'name' }, { column: 'id' }],
        direction: 'asc',
        after: nameCursor(decodeCursor(query.cursor, 2)),
        take: query.limit + 1,
      });
      const rows = await db.sql.query<ServiceTask>(text, params);
      const { page, nextCursor } = paginate(rows, query.limit, (t) => [t.name, t.id]);
      return { ok: true as const, serviceTasks: page.map(toServiceTaskRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreateServiceTaskInput) {
      const task = await db.prisma.serviceTask.create({
        data: { orgId: ctx.orgId, name: input.name, description: input.description ?? null },
      });
      return { ok: true as const, serviceTaskId: task.id };
    },

    async get(ctx: RequestContext, id: string) {
      const task = await db.prisma.serviceTask.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!task) throw notFound('Service task');
      return { ok: true as const, serviceTask: { ...toServiceTaskRow(task), ...(await usage(id)) } };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateServiceTaskInput) {
      const { count } = await db.prisma.serviceTask.updateMany({
        where: { id, orgId: ctx.orgId },
        data: {
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
        },
      });
      if (count === 0) throw notFound('Service task');
      return { ok: true as const, serviceTaskId: id };
    },

    /** An unused task is deleted; one still named by a reminder or a program item is 409 (history stays whole). */
    async remove(ctx: RequestContext, id: string) {
      await transaction(db, async (tx) => {
        const locked = await tx.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id FROM service_tasks WHERE id = $1 AND "orgId" = $2 FOR UPDATE`,
          id,
          ctx.orgId,
        );
        if (locked.length === 0) throw notFound('Service task');
        const [reminderCount, programItemCount] = await Promise.all([
          tx.serviceReminder.count({ where: { serviceTaskId: id } }),
          tx.serviceProgramItem.count({ where: { serviceTaskId: id } }),
        ]);
        if (reminderCount + programItemCount > 0) {
          throw conflict(
            'service_task_in_use',
            `The task is used by ${reminderCount} reminder(s) and ${programItemCount} program item(s); delete or move them first`,
            { reminderCount, programItemCount },
          );
        }
        await tx.serviceTask.delete({ where: { id } });
      });
      return { ok: true as const, serviceTaskId: id };
    },
  };
}

export type ServiceTaskService = ReturnType<typeof createServiceTaskService>;
