import { z } from 'zod';
import { dateTime, optionalText } from '../../core/schemas.ts';
import { decimalNumber, dec, toWire, unitCost } from '../../core/money.ts';

export const LineParams = z.object({ id: z.string().min(1), lineId: z.string().min(1) });

export const AddPartLineBody = z
  .object({
    partId: z.string({ error: 'is required' }).min(1, 'is required').max(100),
    yardId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('The yard the stock is issued from; required unless the part does not track inventory'),
    quantity: decimalNumber(4, { min: 0, max: 1e9 }).refine((n) => n > 0, 'must be greater than 0'),
  })
  .describe('Issues a part to the work order at the cost method’s price, frozen on the line');
export type AddPartLineInput = z.output<typeof AddPartLineBody>;

export const AddLaborLineBody = z
  .object({
    hours: decimalNumber(2, { min: 0, max: 10_000 }).refine((n) => n > 0, 'must be greater than 0'),
    rate: unitCost({ max: 1_000_000 }).describe('Cost of one hour (4 decimals)'),
    technicianId: z.string().max(100).nullable().optional().describe('A user of the organisation'),
    description: optionalText(1000),
  })
  .describe('Labour on the work order: hours x rate, half-up to the cent');
export type AddLaborLineInput = z.output<typeof AddLaborLineBody>;

export const PartLine = z
  .object({
    id: z.string(),
    partId: z.string(),
    yardId: z.string().nullable().describe('Null for a part that does not track inventory'),
    quantity: z.number(),
    unitCost: z.number().describe('totalCost over the quantity, 4 decimals'),
    totalCost: z.number().describe('The exact cost of the units issued, to the cent'),
    createdAt: dateTime(),
    createdBy: z.string().nullable(),
  })
  .meta({ id: 'WorkOrderPartLine' });

export const LaborLine = z
  .object({
    id: z.string(),
    hours: z.number(),
    rate: z.number(),
    totalCost: z.number(),
    technicianId: z.string().nullable(),
    description: z.string().nullable(),
    createdAt: dateTime(),
    createdBy: z.string().nullable(),
  })
  .meta({ id: 'WorkOrderLaborLine' });

export const WorkOrderCosts = z
  .object({ parts: z.number(), labor: z.number(), total: z.number() })
  .describe('Sums of the part and labour lines, to the cent')
  .meta({ id: 'WorkOrderCosts' });

const currency = z.string().describe("ISO 4217 code of the organisation's amounts");
export const PartLineResponse = z.object({ ok: z.literal(true), currency, lineId: z.string(), line: PartLine });
export const LaborLineResponse = z.object({ ok: z.literal(true), currency, lineId: z.string(), line: LaborLine });
export const LineDeletedResponse = z.object({ ok: z.literal(true), lineId: z.string() });

type Num = { toString(): string };
export interface PartLineRow {
  id: string;
  partId: string;
  yardId: string | null;
  quantity: Num;
  unitCost: Num;
  totalCost: Num;
  createdAt: Date;
  createdById: string | null;
}
export interface LaborLineRow {
  id: string;
  hours: Num;
  rate: Num;
  totalCost: Num;
  technicianId: string | null;
  description: string | null;
  createdAt: Date;
  createdById: string | null;
}

export const partLineWire = (l: PartLineRow): z.output<typeof PartLine> => ({
  id: l.id,
  partId: l.partId,
  yardId: l.yardId,
  quantity: toWire(dec(l.quantity), 4),
  unitCost: toWire(dec(l.unitCost), 4),
  totalCost: toWire(dec(l.totalCost), 2),
  createdAt: l.createdAt.toISOString(),
  createdBy: l.createdById,
});

export const laborLineWire = (l: LaborLineRow): z.output<typeof LaborLine> => ({
  id: l.id,
  hours: toWire(dec(l.hours), 2),
  rate: toWire(dec(l.rate), 4),
  totalCost: toWire(dec(l.totalCost), 2),
  technicianId: l.technicianId,
  description: l.description,
  createdAt: l.createdAt.toISOString(),
  createdBy: l.createdById,
});
