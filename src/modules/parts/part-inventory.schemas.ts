import { z } from 'zod';
import { cursorQuery, dateTime, dateTimeInput, limitQuery, optionalText } from '../../core/schemas.ts';
import { toWire, unitCost } from '../../core/money.ts';
import type { LedgerEntry } from './part-costing.rules.ts';
import { quantity } from './parts.schemas.ts';

export const ADJUSTMENT_REASONS = [
  'count',
  'damaged',
  'lost',
  'found',
  'initial',
  'returned_to_vendor',
  'other',
] as const;
export const ENTRY_TYPES = ['adjustment', 'receipt', 'issue', 'return', 'transfer_out', 'transfer_in'] as const;
export const SOURCE_TYPES = ['work_order', 'purchase_order', 'transfer', 'adjustment'] as const;

export const AdjustmentBody = z
  .object({
    yardId: z.string({ error: 'is required' }).min(1, 'is required').max(100),
    quantity: quantity({ min: -1e9 })
      .refine((n) => n !== 0, 'must not be 0 (send countedQuantity to record a count that matches)')
      .optional()
      .describe('Signed change of the stock; send this or countedQuantity'),
    countedQuantity: quantity()
      .optional()
      .describe('What a count found: the entry is the difference (0 when it matches the stock)'),
    reason: z.enum(ADJUSTMENT_REASONS, { error: `must be one of ${ADJUSTMENT_REASONS.join(', ')}` }),
    unitCost: unitCost()
      .optional()
      .describe("Cost of each unit added (default the part's unitCost, else 0); ignored for a decrease"),
    note: optionalText(1000),
  })
  .refine((b) => (b.quantity === undefined) !== (b.countedQuantity === undefined), {
    message: 'send exactly one of quantity and countedQuantity',
    path: ['quantity'],
  })
  .describe('A stock change in one yard; safe to retry with an Idempotency-Key');
export type AdjustmentInput = z.output<typeof AdjustmentBody>;

export const TransferBody = z
  .object({
    fromYardId: z.string({ error: 'is required' }).min(1, 'is required').max(100),
    toYardId: z.string({ error: 'is required' }).min(1, 'is required').max(100),
    quantity: quantity().refine((n) => n > 0, 'must be greater than 0'),
    note: optionalText(1000),
  })
  .refine((b) => b.fromYardId !== b.toYardId, { message: 'must differ from fromYardId', path: ['toYardId'] })
  .describe('Moves stock between two yards with its cost layers');
export type TransferInput = z.output<typeof TransferBody>;

const typeList = z
  .string()
  .optional()
  .transform((s) => (s ? s.split(',').map((v) => v.trim()) : undefined))
  .refine(
    (v) => v === undefined || v.every((t) => (ENTRY_TYPES as readonly string[]).includes(t)),
    `must be a comma-separated subset of ${ENTRY_TYPES.join(', ')}`,
  )
  .describe(`Comma-separated entry types: ${ENTRY_TYPES.join(', ')}`);

export const LedgerQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  partId: z.string().max(100).optional(),
  yardId: z.string().max(100).optional(),
  type: typeList,
  since: dateTimeInput().optional().describe('Entries created at or after this instant'),
});
export type LedgerQueryInput = z.output<typeof LedgerQuery>;

export const ValuationQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  yardId: z.string().max(100).optional(),
  format: z.enum(['json', 'csv']).optional().default('json').describe('csv streams every row as a file'),
});
export type ValuationQueryInput = z.output<typeof ValuationQuery>;

// ---- responses

export const LedgerEntryWire = z
  .object({
    id: z.string(),
    partId: z.string(),
    yardId: z.string(),
    type: z.enum(ENTRY_TYPES),
    quantity: z.number().describe('Signed change: negative for issues, transfers out and decreases'),
    previousQuantity: z.number(),
    currentQuantity: z.number(),
    unitCost: z.number().describe('totalCost over the quantity, 4 decimals'),
    totalCost: z.number().describe('Exact value of the units moved, to the cent (the layers they came from)'),
    reason: z.string().nullable(),
    note: z.string().nullable(),
    source: z.object({ type: z.enum(SOURCE_TYPES), id: z.string() }).nullable(),
    createdAt: dateTime(),
    createdBy: z.string().nullable().describe('The user of the key that made the change'),
  })
  .meta({ id: 'InventoryLedgerEntry' });

const currency = z.string().describe("ISO 4217 code of the organisation's amounts");
export const AdjustmentResponse = z.object({ ok: z.literal(true), currency, entry: LedgerEntryWire });
export const TransferResponse = z.object({
  ok: z.literal(true),
  currency,
  transferId: z.string(),
  entries: z.array(LedgerEntryWire).describe('The transfer_out entry, then the transfer_in entry'),
});
export const LedgerResponse = z.object({
  ok: z.literal(true),
  currency,
  entries: z.array(LedgerEntryWire),
  nextCursor: z.string().nullable(),
});

export const ValuationRow = z
  .object({
    partId: z.string(),
    partNumber: z.string(),
    partName: z.string(),
    yardId: z.string(),
    onHand: z.number(),
    value: z.number(),
  })
  .meta({ id: 'InventoryValuationRow' });
export const ValuationResponse = z.object({
  ok: z.literal(true),
  currency,
  rows: z.array(ValuationRow).describe('One row per part and yard with stock, by part then yard'),
  total: z.object({ value: z.number().describe('Value of every row, not only this page') }),
  nextCursor: z.string().nullable(),
});

export const ledgerEntryWire = (e: LedgerEntry): z.output<typeof LedgerEntryWire> => ({
  id: e.id,
  partId: e.partId,
  yardId: e.yardId,
  type: e.type,
  quantity: toWire(e.quantity, 4),
  previousQuantity: toWire(e.previousQuantity, 4),
  currentQuantity: toWire(e.currentQuantity, 4),
  unitCost: toWire(e.unitCost, 4),
  totalCost: toWire(e.totalCost, 2),
  reason: e.reason,
  note: e.note,
  source: e.source,
  createdAt: e.createdAt.toISOString(),
  createdBy: e.createdById,
});
