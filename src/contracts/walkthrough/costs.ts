import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: fuel entries and expenses, in order. */
export const COST_STEPS: Step[] = [
  // Fuel: a fill, settled later by its fuel card's transaction id.
  {
    operationId: 'createFuelEntry',
    body: {
      assetId: '{{assetId}}',
      fueledAt: '2026-02-10T07:30:00Z',
      volume: 42.5,
      unit: 'GALLON',
      pricePerUnit: 3.899,
      fuelType: 'diesel',
      externalId: 'card-{{$timestamp}}',
      projectId: '{{projectId}}',
    },
    status: 201,
    save: { fuelEntryId: 'fuelEntryId' },
    checks: [okTrue, str('fuelEntryId')],
  },
  {
    operationId: 'createFuelEntry',
    name: 'Settle the fill: the same externalId updates it',
    body: {
      assetId: '{{assetId}}',
      fueledAt: '2026-02-10T07:30:00Z',
      volume: 42.5,
      unit: 'GALLON',
      totalCost: 163.42,
      externalId: 'card-{{$timestamp}}',
    },
    status: 200,
    checks: [okTrue, is('fuelEntryId', '{{fuelEntryId}}')],
  },
  {
    operationId: 'listFuelEntries',
    query: { assetId: '{{assetId}}', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'fuelEntries', type: 'array' }],
  },
  {
    operationId: 'getFuelEntry',
    params: { id: '{{fuelEntryId}}' },
    status: 200,
    checks: [okTrue, is('fuelEntry.totalCost', 163.42)],
  },
  {
    operationId: 'updateFuelEntry',
    params: { id: '{{fuelEntryId}}' },
    body: { partial: true, note: 'Tank not topped up' },
    status: 200,
    checks: [okTrue, is('fuelEntryId', '{{fuelEntryId}}')],
  },
  // Expenses: what the machine costs besides fuel and repairs.
  {
    operationId: 'createExpense',
    body: { assetId: '{{assetId}}', type: 'insurance', amount: 1840, incurredAt: '2026-01-05', note: 'Annual policy' },
    status: 201,
    save: { expenseId: 'expenseId' },
    checks: [okTrue, str('expenseId')],
  },
  {
    operationId: 'listExpenses',
    query: { assetId: '{{assetId}}', type: 'insurance' },
    status: 200,
    checks: [okTrue, { path: 'expenses', type: 'array' }],
  },
  {
    operationId: 'getExpense',
    params: { id: '{{expenseId}}' },
    status: 200,
    checks: [okTrue, is('expense.amount', 1840)],
  },
  {
    operationId: 'updateExpense',
    params: { id: '{{expenseId}}' },
    body: { amount: 1795.5 },
    status: 200,
    checks: [okTrue],
  },
];

/** Deleting what the cost steps created, with the other clean-up steps. */
export const COST_CLEANUP_STEPS: Step[] = [
  { operationId: 'deleteFuelEntry', params: { id: '{{fuelEntryId}}' }, status: 200, checks: [okTrue] },
  { operationId: 'deleteExpense', params: { id: '{{expenseId}}' }, status: 200, checks: [okTrue] },
];
