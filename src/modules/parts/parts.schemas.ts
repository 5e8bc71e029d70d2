import { z } from 'zod';
import type { Part } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, iso, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';
import { decimalNumber, dec, toWire, unitCost } from '../../core/money.ts';

/** `true`/`1` or `false`/`0`; anything else is 422. */
export const boolQuery = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .optional()
  .transform((v) => v === 'true' || v === '1');

/** A quantity of stock: at most 4 decimals (litres of oil), never negative unless `min` says so. */
export const quantity = (options: { min?: number } = {}) => decimalNumber(4, { min: options.min ?? 0, max: 1e9 });

const partFields = {
  description: optionalText(5000),
  manufacturer: optionalText(200),
  manufacturerPartNumber: optionalText(100),
  upc: optionalText(50),
  category: optionalText(100),
  unit: optionalText(30).describe('Unit of measure, e.g. each, litre, box'),
  unitCost: unitCost()
    .nullable()
    .optional()
    .describe('Default cost of one unit (4 decimals): positive adjustments without a unitCost, untracked parts'),
  reorderPoint: quantity()
    .nullable()
    .optional()
    .describe('part.low_stock fires when a yard goes from above this to at or below it'),
  reorderQuantity: quantity().nullable().optional(),
};

export const CreatePartBody = z
  .object({
    number: requiredText(100).describe('Unique in the organisation whatever its case'),
    name: requiredText(200),
    ...partFields,
    trackInventory: z
      .boolean()
      .optional()
      .describe('Default true; false: no stock is kept, work orders cost it at unitCost'),
  })
  .describe('Part fields; number and name are required; unknown fields are ignored');
export type CreatePartInput = z.output<typeof CreatePartBody>;

export const UPDATABLE_PART_FIELDS = [
  'number',
  'name',
  'description',
  'manufacturer',
  'manufacturerPartNumber',
  'upc',
  'category',
  'unit',
  'unitCost',
  'trackInventory',
  'reorderPoint',
  'reorderQuantity',
] as const;

export const UpdatePartBody = z
  .object({
    number: requiredText(100).optional(),
    name: requiredText(200).optional(),
    ...partFields,
    trackInventory: z
      .boolean()
      .optional()
      .describe('Switching it off is 409 part_has_stock while any yard holds the part'),
  })
  .describe('Any subset of the part fields; null clears a nullable field; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdatePartInput = z.output<typeof UpdatePartBody>;

export const ListPartsQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  q: z.string().trim().max(100).optional().describe('Part number, name or manufacturer part number contains'),
  category: z.string().max(100).optional().describe('Exact category, any case'),
  yardId: z.string().max(100).optional().describe('Parts with stock on hand in this yard'),
  belowReorderPoint: boolQuery.describe(
    'Parts with a reorder point whose stock is at or below it in a yard, or never stocked anywhere',
  ),
  archived: boolQuery.describe('true: the archived parts only (default: active parts only)'),
});
export type ListPartsInput = z.output<typeof ListPartsQuery>;

// ---- responses

export const PartRow = z
  .object({
    id: z.string(),
    number: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    manufacturer: z.string().nullable(),
    manufacturerPartNumber: z.string().nullable(),
    upc: z.string().nullable(),
    category: z.string().nullable(),
    unit: z.string().nullable(),
    unitCost: z.number().nullable(),
    trackInventory: z.boolean(),
    reorderPoint: z.number().nullable(),
    reorderQuantity: z.number().nullable(),
    onHand: z.number().describe('Stock in every yard'),
    value: z.number().describe('What that stock is worth at cost'),
    archivedAt: dateTime().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'PartRow' });

export const PartStockRow = z
  .object({
    yardId: z.string(),
    onHand: z.number(),
    value: z.number(),
    atOrBelowReorderPoint: z.boolean(),
  })
  .meta({ id: 'PartStock' });

export const PartDetail = PartRow.extend({
  stock: z.array(PartStockRow).describe('One row per yard the part was ever stocked in'),
}).meta({ id: 'PartDetail' });

const currency = z.string().describe("ISO 4217 code of the organisation's amounts");
export const ListPartsResponse = z.object({
  ok: z.literal(true),
  currency,
  parts: z.array(PartRow),
  nextCursor: z.string().nullable(),
});
export const PartDetailResponse = z.object({ ok: z.literal(true), currency, part: PartDetail });
export const PartIdResponse = z.object({ ok: z.literal(true), partId: z.string() });
export const PartArchivedResponse = z.object({ ok: z.literal(true), partId: z.string(), archivedAt: dateTime() });

export type PartWithTotals = Part & { onHand: unknown; value: unknown };

export const partWire = (p: PartWithTotals): z.output<typeof PartRow> => ({
  id: p.id,
  number: p.number,
  name: p.name,
  description: p.description,
  manufacturer: p.manufacturer,
  manufacturerPartNumber: p.manufacturerPartNumber,
  upc: p.upc,
  category: p.category,
  unit: p.unit,
  unitCost: p.unitCost == null ? null : toWire(dec(p.unitCost), 4),
  trackInventory: p.trackInventory,
  reorderPoint: p.reorderPoint == null ? null : toWire(dec(p.reorderPoint), 4),
  reorderQuantity: p.reorderQuantity == null ? null : toWire(dec(p.reorderQuantity), 4),
  onHand: toWire(dec((p.onHand ?? 0) as string), 4),
  value: toWire(dec((p.value ?? 0) as string), 2),
  archivedAt: iso(p.archivedAt),
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});
