import { z } from 'zod';
import { dec, moneyAmount, toWire } from '../../core/money.ts';
import { cursorQuery, dateTime, dateTimeInput, limitQuery, optionalText } from '../../core/schemas.ts';

export const EXPENSE_TYPES = ['insurance', 'registration', 'tolls', 'rental', 'tires', 'fines', 'other'] as const;

const ref = () => z.string().min(1).max(100).nullable().optional();

// ---- requests

export const CreateExpenseBody = z
  .object({
    assetId: z
      .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
      .min(1)
      .max(100),
    type: z.enum(EXPENSE_TYPES, {
      error: (i) => (i.input === undefined ? 'is required' : `must be one of ${EXPENSE_TYPES.join(', ')}`),
    }),
    amount: moneyAmount({ max: 1e10 }).describe('2 decimals at most'),
    incurredAt: dateTimeInput().describe('When the cost was incurred: the period it counts in'),
    vendorId: ref(),
    projectId: ref(),
    note: optionalText(1000),
  })
  .meta({ id: 'ExpenseCreate' });
export type CreateExpenseInput = z.output<typeof CreateExpenseBody>;

export const UPDATABLE_EXPENSE_FIELDS = ['type', 'amount', 'incurredAt', 'vendorId', 'projectId', 'note'] as const;

export const UpdateExpenseBody = z
  .object({
    type: z.enum(EXPENSE_TYPES).optional(),
    amount: moneyAmount({ max: 1e10 }).optional(),
    incurredAt: dateTimeInput().optional(),
    vendorId: ref(),
    projectId: ref(),
    note: optionalText(1000),
  })
  .describe('Any subset of the fields; null clears a nullable field (the asset of an expense never changes)')
  .meta({ id: 'ExpenseUpdate', minProperties: 1 });
export type UpdateExpenseInput = z.output<typeof UpdateExpenseBody>;

export const ListExpensesQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  assetId: z.string().min(1).max(100).optional(),
  projectId: z.string().min(1).max(100).optional(),
  type: z.enum(EXPENSE_TYPES).optional(),
  since: dateTimeInput().optional().describe('Expenses incurred at or after this time'),
  until: dateTimeInput().optional().describe('Expenses incurred before this time'),
});
export type ListExpensesInput = z.output<typeof ListExpensesQuery>;

// ---- responses

export const Expense = z
  .object({
    id: z.string(),
    assetId: z.string(),
    type: z.enum(EXPENSE_TYPES),
    amount: z.number(),
    incurredAt: dateTime(),
    vendorId: z.string().nullable(),
    projectId: z.string().nullable(),
    note: z.string().nullable(),
    createdById: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'Expense' });

export const ExpenseIdResponse = z.object({ ok: z.literal(true), expenseId: z.string() });
export const ExpenseDetailResponse = z.object({ ok: z.literal(true), expense: Expense });
export const ListExpensesResponse = z.object({
  ok: z.literal(true),
  expenses: z.array(Expense),
  nextCursor: z.string().nullable(),
});

// ---- mapping

export interface ExpenseRow {
  id: string;
  assetId: string;
  type: string;
  amount: { toString(): string };
  incurredAt: Date;
  vendorId: string | null;
  projectId: string | null;
  note: string | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toExpense(r: ExpenseRow): z.input<typeof Expense> {
  return {
    id: r.id,
    assetId: r.assetId,
    type: r.type as (typeof EXPENSE_TYPES)[number],
    amount: toWire(dec(r.amount)),
    incurredAt: r.incurredAt.toISOString(),
    vendorId: r.vendorId,
    projectId: r.projectId,
    note: r.note,
    createdById: r.createdById,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}
