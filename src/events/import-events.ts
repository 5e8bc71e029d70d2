import { z } from 'zod';

/** Imports of files: the end of each, once per import. */
const counts = z.object({
  rows: z.number().int(),
  create: z.number().int(),
  update: z.number().int(),
  unchanged: z.number().int(),
  error: z.number().int(),
});
const type = z.enum(['assets', 'meter_readings', 'fuel_entries', 'parts', 'stock_counts', 'tools', 'vendors']);

export const importEvents = {
  'import.completed': {
    summary:
      'An import committed: every row (status completed) or its good rows (partially_completed, onError skip_rows).',
    data: z.object({
      importId: z.string(),
      type,
      status: z.enum(['completed', 'partially_completed']),
      counts,
      completedAt: z.iso.datetime({ offset: true }),
    }),
  },
  'import.failed': {
    summary:
      'An import ended failed: its file could not be read as its type, or its commit found the data changed since ' +
      'validation (nothing was written), or it was interrupted and could not resume.',
    data: z.object({
      importId: z.string(),
      type,
      counts,
      reason: z.string(),
      failedAt: z.iso.datetime({ offset: true }),
    }),
  },
};

const COUNTS = { rows: 812, create: 790, update: 12, unchanged: 4, error: 6 };

export const IMPORT_EVENT_EXAMPLES: {
  [T in keyof typeof importEvents]: z.input<(typeof importEvents)[T]['data']>;
} = {
  'import.completed': {
    importId: 'imp_01',
    type: 'assets',
    status: 'partially_completed',
    counts: COUNTS,
    completedAt: '2026-11-22T14:05:00.000Z',
  },
  'import.failed': {
    importId: 'imp_02',
    type: 'meter_readings',
    counts: { rows: 0, create: 0, update: 0, unchanged: 0, error: 0 },
    reason: 'the file has no column for loggedAt',
    failedAt: '2026-11-22T14:05:00.000Z',
  },
};
