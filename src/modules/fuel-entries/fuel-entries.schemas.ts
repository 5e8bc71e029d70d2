import { z } from 'zod';
import { dec, decimalNumber, moneyAmount, toWire } from '../../core/money.ts';
import { cursorQuery, dateTime, dateTimeInput, iso, limitQuery, optionalText } from '../../core/schemas.ts';
import { FUEL_ENTRY_UNITS } from './fuel-entries.rules.ts';

const ref = () => z.string().min(1).max(100).nullable().optional();

// ---- requests

const fillFields = {
  fueledAt: dateTimeInput().describe('When the tank was filled; at most 5 minutes in the future'),
  volume: decimalNumber(4, { min: 0.0001, max: 1_000_000 }).describe('Volume in `unit`, up to 4 decimals'),
  unit: z.enum(FUEL_ENTRY_UNITS).describe('GALLON (US, 3.785411784 L), GALLON_UK (4.54609 L) or LITER'),
  totalCost: moneyAmount({ max: 1e9 })
    .nullable()
    .optional()
    .describe('What the fill cost, 2 decimals; give this or pricePerUnit, never both'),
  pricePerUnit: decimalNumber(3, { max: 1e6 })
    .nullable()
    .optional()
    .describe('Price per unit as the pump shows it, up to 3 decimals; give this or totalCost, never both'),
  fuelType: optionalText(50).describe('Free text, e.g. diesel, unleaded, DEF'),
  vendorId: ref().describe('The vendor that sold the fuel'),
  meterReading: z
    .number()
    .min(0)
    .max(1e9)
    .nullable()
    .optional()
    .describe('The meter at the fill: recorded as a meter reading (source fuel) under the same rules as POST /hours'),
  void: z
    .boolean()
    .optional()
    .describe('A voided fill keeps its cost but its reading counts in no distance or economy'),
  partial: z.boolean().optional().describe('Not filled to full: carried to the next full fill for fuel economy'),
  cardNumber: optionalText(64).describe('The fuel card used'),
  projectId: ref(),
  note: optionalText(1000).describe('Also the reading note: required when meterReading is below the last reading'),
};

export const CreateFuelEntryBody = z
  .object({
    assetId: z
      .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
      .min(1)
      .max(100),
    ...fillFields,
    externalId: optionalText(200).describe(
      'Your id of the fill (e.g. the fuel card transaction): unique per organisation; posting it again updates the entry (200)',
    ),
  })
  .meta({ id: 'FuelEntryCreate' });
export type CreateFuelEntryInput = z.output<typeof CreateFuelEntryBody>;

export const UpdateFuelEntryBody = z
  .object({
    fueledAt: fillFields.fueledAt.optional(),
    volume: fillFields.volume.optional(),
    unit: fillFields.unit.optional(),
    totalCost: fillFields.totalCost,
    pricePerUnit: fillFields.pricePerUnit,
    fuelType: fillFields.fuelType,
    vendorId: fillFields.vendorId,
    meterReading: fillFields.meterReading.describe(
      'Only on an entry without a recorded reading (or the same value): a recorded reading is part of the meter history',
    ),
    void: fillFields.void,
    partial: fillFields.partial,
    cardNumber: fillFields.cardNumber,
    projectId: fillFields.projectId,
    note: fillFields.note,
  })
  .describe('Any subset of the fields; null clears a nullable field')
  .meta({ id: 'FuelEntryUpdate', minProperties: 1 });
export type UpdateFuelEntryInput = z.output<typeof UpdateFuelEntryBody>;

export const ListFuelEntriesQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  assetId: z.string().min(1).max(100).optional(),
  projectId: z.string().min(1).max(100).optional(),
  since: dateTimeInput().optional().describe('Fills at or after this time (fueledAt)'),
  until: dateTimeInput().optional().describe('Fills before this time (fueledAt)'),
});
export type ListFuelEntriesInput = z.output<typeof ListFuelEntriesQuery>;

// ---- responses

export const FuelEntry = z
  .object({
    id: z.string(),
    assetId: z.string(),
    fueledAt: dateTime(),
    volume: z.number(),
    unit: z.enum(FUEL_ENTRY_UNITS),
    volumeLiters: z.number().describe('The volume in litres, 3 decimals'),
    totalCost: z.number(),
    pricePerUnit: z.number().describe('Per unit of `unit`, 3 decimals'),
    fuelType: z.string().nullable(),
    vendorId: z.string().nullable(),
    meterReading: z.number().nullable(),
    logId: z.string().nullable().describe('The meter log of the reading (GET /hours/{id}), else null'),
    void: z.boolean(),
    partial: z.boolean(),
    externalId: z.string().nullable(),
    cardNumber: z.string().nullable(),
    projectId: z.string().nullable(),
    note: z.string().nullable(),
    createdById: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'FuelEntry' });

export const FuelEntryWrittenResponse = z
  .object({
    ok: z.literal(true),
    fuelEntryId: z.string(),
    logId: z.string().nullable().describe('The meter log of the reading, else null'),
  })
  .meta({ id: 'FuelEntryWritten' });
export const FuelEntryDetailResponse = z.object({ ok: z.literal(true), fuelEntry: FuelEntry });
export const FuelEntryDeletedResponse = z.object({ ok: z.literal(true), fuelEntryId: z.string() });
export const ListFuelEntriesResponse = z.object({
  ok: z.literal(true),
  fuelEntries: z.array(FuelEntry),
  nextCursor: z.string().nullable(),
});

// ---- mapping

/** A fuel_entries row as read: numeric columns as text (raw SQL) or Prisma decimals. */
export interface FuelEntryRow {
  id: string;
  assetId: string;
  fueledAt: Date;
  volume: { toString(): string };
  unit: string;
  volumeLiters: { toString(): string };
  totalCost: { toString(): string };
  pricePerUnit: { toString(): string };
  fuelType: string | null;
  vendorId: string | null;
  meterReading: number | null;
  logId: string | null;
  void: boolean;
  partial: boolean;
  externalId: string | null;
  cardNumber: string | null;
  projectId: string | null;
  note: string | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toFuelEntry(r: FuelEntryRow): z.input<typeof FuelEntry> {
  return {
    id: r.id,
    assetId: r.assetId,
    fueledAt: r.fueledAt.toISOString(),
    volume: toWire(dec(r.volume), 4),
    unit: r.unit as (typeof FUEL_ENTRY_UNITS)[number],
    volumeLiters: toWire(dec(r.volumeLiters), 3),
    totalCost: toWire(dec(r.totalCost)),
    pricePerUnit: toWire(dec(r.pricePerUnit), 3),
    fuelType: r.fuelType,
    vendorId: r.vendorId,
    meterReading: r.meterReading,
    logId: r.logId,
    void: r.void,
    partial: r.partial,
    externalId: r.externalId,
    cardNumber: r.cardNumber,
    projectId: r.projectId,
    note: r.note,
    createdById: r.createdById,
    createdAt: r.createdAt.toISOString(),
    updatedAt: iso(r.updatedAt)!,
  };
}
