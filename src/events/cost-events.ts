import { z } from 'zod';

/** Fuel entries and expenses: the cost records the cost reports add up. */
const id = z.string();
const nullableId = z.string().nullable();
const at = z.iso.datetime({ offset: true });

const fuelEntry = z.object({
  fuelEntryId: id,
  assetId: id,
  fueledAt: at,
  volume: z.number(),
  unit: z.enum(['GALLON', 'GALLON_UK', 'LITER']),
  totalCost: z.number(),
  pricePerUnit: z.number(),
  meterReading: z.number().nullable(),
  logId: nullableId.describe('The meter log of the reading (source fuel)'),
  void: z.boolean(),
  partial: z.boolean(),
  projectId: nullableId,
  vendorId: nullableId,
  externalId: z.string().nullable(),
  actorId: nullableId,
});

export const costEvents = {
  'fuel_entry.created': {
    summary:
      'A fill is recorded (POST /fuel-entries); its meter reading, if any, also sends hours.logged (source fuel).',
    data: fuelEntry,
  },
  'fuel_entry.updated': {
    summary:
      'A fill changes: PATCH, or a POST repeating its externalId (a fuel card settling its price); names the changed fields.',
    data: fuelEntry.extend({ changedFields: z.array(z.string()) }),
  },
  'expense.created': {
    summary: 'An expense is recorded on an asset (insurance, registration, tolls, rental, tires, fines, other).',
    data: z.object({
      expenseId: id,
      assetId: id,
      type: z.enum(['insurance', 'registration', 'tolls', 'rental', 'tires', 'fines', 'other']),
      amount: z.number(),
      incurredAt: at,
      projectId: nullableId,
      vendorId: nullableId,
      actorId: nullableId,
    }),
  },
};

const USER = 'usr_7f3c2a';
const FUEL_ENTRY_EXAMPLE = {
  fuelEntryId: 'fue_01',
  assetId: 'ast_01',
  fueledAt: '2026-11-22T07:40:00.000Z',
  volume: 80,
  unit: 'GALLON' as const,
  totalCost: 311.2,
  pricePerUnit: 3.89,
  meterReading: 1250.5,
  logId: 'log_01',
  void: false,
  partial: false,
  projectId: null,
  vendorId: null,
  externalId: 'card-7731-0042',
  actorId: USER,
};

export const COST_EVENT_EXAMPLES: {
  [T in keyof typeof costEvents]: z.input<(typeof costEvents)[T]['data']>;
} = {
  'fuel_entry.created': FUEL_ENTRY_EXAMPLE,
  'fuel_entry.updated': {
    ...FUEL_ENTRY_EXAMPLE,
    totalCost: 311.47,
    pricePerUnit: 3.893,
    changedFields: ['totalCost', 'pricePerUnit'],
  },
  'expense.created': {
    expenseId: 'exp_01',
    assetId: 'ast_01',
    type: 'insurance',
    amount: 1250,
    incurredAt: '2026-11-22T14:05:00.000Z',
    projectId: null,
    vendorId: null,
    actorId: USER,
  },
};
