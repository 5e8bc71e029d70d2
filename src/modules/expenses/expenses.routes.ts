import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { IdParams } from '../../core/schemas.ts';
import {
  CreateExpenseBody,
  ExpenseDetailResponse,
  ExpenseIdResponse,
  ListExpensesQuery,
  ListExpensesResponse,
  UpdateExpenseBody,
} from './expenses.schemas.ts';

export const expenseRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const expenses = services.expenses;
    const tags = ['expenses'];

    app.get(
      '/expenses',
      {
        config: { scope: 'expenses:read' },
        schema: {
          operationId: 'listExpenses',
          tags,
          summary: 'List expenses, newest first (by incurredAt)',
          querystring: ListExpensesQuery,
          response: { 200: ListExpensesResponse },
        },
      },
      (req) => expenses.list(contextOf(req), req.query),
    );

    app.post(
      '/expenses',
      {
        config: { scope: 'expenses:write' },
        schema: {
          operationId: 'createExpense',
          tags,
          summary: 'Record an expense on an asset (insurance, registration, tolls, rental, tires, fines, other)',
          body: CreateExpenseBody,
          response: { 201: ExpenseIdResponse },
        },
      },
      async (req, reply) => reply.code(201).send(await expenses.create(contextOf(req), req.body)),
    );

    app.get(
      '/expenses/:id',
      {
        config: { scope: 'expenses:read' },
        schema: {
          operationId: 'getExpense',
          tags,
          summary: 'Expense detail',
          params: IdParams,
          response: { 200: ExpenseDetailResponse },
        },
      },
      (req) => expenses.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/expenses/:id',
      {
        config: { scope: 'expenses:write' },
        schema: {
          operationId: 'updateExpense',
          tags,
          summary: 'Change an expense',
          params: IdParams,
          body: UpdateExpenseBody,
          response: { 200: ExpenseIdResponse },
        },
      },
      (req) => expenses.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/expenses/:id',
      {
        config: { scope: 'expenses:write' },
        schema: {
          operationId: 'deleteExpense',
          tags,
          summary: 'Delete an expense',
          params: IdParams,
          response: { 200: ExpenseIdResponse },
        },
      },
      (req) => expenses.remove(contextOf(req), req.params.id),
    );
  };
