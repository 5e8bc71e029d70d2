import type { Prisma } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { dec, toSql } from '../../core/money.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { emit } from '../../events/outbox.ts';
import { assertReferences } from '../shared/references.ts';
import { assertVendorReference } from '../vendors/vendors.repository.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { listExpenses } from './expenses.repository.ts';
import {
  toExpense,
  UPDATABLE_EXPENSE_FIELDS,
  type CreateExpenseInput,
  type ListExpensesInput,
  type UpdateExpenseInput,
} from './expenses.schemas.ts';

async function findOwned(tx: Tx, orgId: string, id: string) {
  const expense = await tx.expense.findFirst({ where: { id, orgId } });
  if (!expense) throw notFound('Expense');
  return expense;
}

export function createExpenseService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async create(ctx: RequestContext, input: CreateExpenseInput) {
      return transaction(db, async (tx) => {
        await assertReferences(tx, ctx.orgId, [
          { field: 'assetId', kind: 'asset', id: input.assetId },
          { field: 'projectId', kind: 'project', id: input.projectId },
        ]);
        await assertVendorReference(tx, ctx.orgId, input.vendorId);
        const expense = await tx.expense.create({
          data: {
            orgId: ctx.orgId,
            assetId: input.assetId,
            type: input.type,
            amount: toSql(dec(input.amount)),
            incurredAt: input.incurredAt,
            vendorId: input.vendorId ?? null,
            projectId: input.projectId ?? null,
            note: input.note ?? null,
            createdById: ctx.actorId,
          },
        });
        await emit(tx, ctx.orgId, 'expense.created', {
          expenseId: expense.id,
          assetId: expense.assetId,
          type: input.type,
          amount: input.amount,
          incurredAt: expense.incurredAt.toISOString(),
          projectId: expense.projectId,
          vendorId: expense.vendorId,
          actorId: ctx.actorId,
        });
        return { ok: true as const, expenseId: expense.id };
      });
    },

    async list(ctx: RequestContext, query: ListExpensesInput) {
      const rows = await listExpenses(db.sql, ctx.orgId, query, timeIdCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.incurredAt.toISOString(), r.id]);
      return { ok: true as const, expenses: page.map(toExpense), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      return { ok: true as const, expense: toExpense(await findOwned(db.prisma, ctx.orgId, id)) };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateExpenseInput) {
      const fields = UPDATABLE_EXPENSE_FIELDS.filter((f) => patch[f] !== undefined);
      if (fields.length === 0)
        throw new ValidationError(
          { body: `send at least one of: ${UPDATABLE_EXPENSE_FIELDS.join(', ')}` },
          'The patch is empty',
        );
      return transaction(db, async (tx) => {
        const before = await findOwned(tx, ctx.orgId, id);
        await assertReferences(tx, ctx.orgId, [{ field: 'projectId', kind: 'project', id: patch.projectId }]);
        if (patch.vendorId !== before.vendorId) await assertVendorReference(tx, ctx.orgId, patch.vendorId);
        const data: Prisma.ExpenseUncheckedUpdateInput = {};
        for (const field of fields) {
          const value = patch[field];
          (data as Record<string, unknown>)[field] = field === 'amount' ? toSql(dec(value as number)) : value;
        }
        await tx.expense.update({ where: { id: before.id }, data });
        return { ok: true as const, expenseId: before.id };
      });
    },

    async remove(ctx: RequestContext, id: string) {
      return transaction(db, async (tx) => {
        const expense = await findOwned(tx, ctx.orgId, id);
        await tx.expense.delete({ where: { id: expense.id } });
        return { ok: true as const, expenseId: expense.id };
      });
    },
  };
}

export type ExpenseService = ReturnType<typeof createExpenseService>;
