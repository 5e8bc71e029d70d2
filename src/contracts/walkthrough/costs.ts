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
    operationId: 'getFuelEntry',
    name: "Read the fill back, with its fuel card's transaction id",
    params: { id: '{{fuelEntryId}}' },
    status: 200,
    save: { fuelExternalId: 'fuelEntry.externalId' },
    checks: [okTrue, is('fuelEntry.id', '{{fuelEntryId}}')],
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
      externalId: '{{fuelExternalId}}',
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
  // What the machine costs: depreciation, its costs per meter unit, and the fleet report.
  {
    operationId: 'getAssetDepreciation',
    params: { id: '{{assetId}}' },
    status: 200,
    checks: [okTrue, str('method'), { path: 'schedule', type: 'array' }],
  },
  {
    operationId: 'getAssetCosts',
    params: { id: '{{assetId}}' },
    query: { from: '2026-01-01', to: '2026-07-01' },
    status: 200,
    checks: [okTrue, str('currency'), { path: 'fuel', type: 'number' }, { path: 'total', type: 'number' }],
  },
  {
    operationId: 'getCostReport',
    query: { from: '2026-01-01', to: '2026-07-01', groupBy: 'project', limit: '20' },
    status: 200,
    checks: [okTrue, { path: 'rows', type: 'array' }, { path: 'totals.total', type: 'number' }],
  },
  {
    operationId: 'getCostReport',
    name: 'Export the cost report by asset as CSV',
    query: { from: '2026-01-01', to: '2026-07-01', groupBy: 'asset', format: 'csv' },
    status: 200,
    contentType: 'text/csv',
  },
];

/** Deleting what the cost steps created, with the other clean-up steps. */
export const COST_CLEANUP_STEPS: Step[] = [
  { operationId: 'deleteFuelEntry', params: { id: '{{fuelEntryId}}' }, status: 200, checks: [okTrue] },
  { operationId: 'deleteExpense', params: { id: '{{expenseId}}' }, status: 200, checks: [okTrue] },
];
