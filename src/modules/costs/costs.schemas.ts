import { z } from 'zod';
import { ValidationError } from '../../core/errors.ts';
import { cursorQuery, dateTime, dateTimeInput, limitQuery } from '../../core/schemas.ts';
import { GROUP_BY } from './cost-rows.schemas.ts';

const MAX_PERIOD_MS = 10 * 366 * 86_400_000;
const METHODS = ['NONE', 'STRAIGHT_LINE', 'DECLINING_BALANCE'] as const;

/** [from, to): `to` after `from`, ten years at most (422 otherwise). */
export function checkPeriod(from: Date, to: Date) {
  if (to <= from) throw new ValidationError({ to: 'must be after from' });
  const tenYears = new Date(from.getTime());
  tenYears.setUTCFullYear(tenYears.getUTCFullYear() + 10);
  if (to > tenYears || to.getTime() - from.getTime() > MAX_PERIOD_MS)
    throw new ValidationError({ to: 'the period is longer than ten years' });
}

// ---- requests

export const AssetCostsQuery = z.object({
  from: dateTimeInput().optional().describe('Start of the period, inclusive (default: 365 days before `to`)'),
  to: dateTimeInput().optional().describe('End of the period, exclusive (default: now)'),
});

export const CostReportQuery = z.object({
  from: dateTimeInput().describe('Start of the period (UTC), inclusive'),
  to: dateTimeInput().describe('End of the period (UTC), exclusive; at most ten years after from'),
  groupBy: z.enum(GROUP_BY).optional().default('asset'),
  format: z.enum(['json', 'csv']).optional().default('json').describe('csv streams every row (no paging)'),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type CostReportInput = z.output<typeof CostReportQuery>;

// ---- responses

const money = () => z.number().describe('In the organisation currency, 2 decimals');

export const FuelEconomy = z
  .object({
    litersPerHour: z.number().optional().describe('HOURS meters'),
    kmPerLiter: z.number().optional().describe('ODOMETER meters'),
    mpgUs: z.number().optional().describe('ODOMETER meters, miles per US gallon'),
  })
  .nullable()
  .describe('Over the complete full-to-full fill segments of the period; null without one')
  .meta({ id: 'FuelEconomy' });

const figureFields = {
  fuel: money(),
  parts: money().describe('Work-order part lines'),
  labor: money().describe('Work-order labour lines'),
  repairs: money().describe("Repairs' cost, when their work order has no lines"),
  expenses: money(),
  depreciation: money().describe("The period's share of the depreciation schedule"),
  total: money(),
  meterStart: z.number().nullable(),
  meterEnd: z.number().nullable(),
  meterDelta: z.number().nullable(),
  meterUnit: z.string().nullable(),
  costPerMeterUnit: z.number().nullable().describe('total / meterDelta; null when the meter did not move'),
  fuelVolumeLiters: z.number(),
  fuelEconomy: FuelEconomy,
};

export const AssetCostsResponse = z
  .object({
    ok: z.literal(true),
    assetId: z.string(),
    from: dateTime(),
    to: dateTime(),
    currency: z.string().describe('ISO 4217 code of the organisation'),
    ...figureFields,
  })
  .meta({ id: 'AssetCosts' });

export const CostReportRow = z
  .object({
    key: z.string().nullable().describe('Asset, project or yard id, or asset class; null: no project or no yard'),
    name: z.string(),
    assetCount: z.number().int().describe('Assets with any figure in the group'),
    ...figureFields,
  })
  .meta({ id: 'CostReportRow' });

export const CostReportTotals = z
  .object({
    fuel: money(),
    parts: money(),
    labor: money(),
    repairs: money(),
    expenses: money(),
    depreciation: money(),
    total: money(),
    fuelVolumeLiters: z.number(),
    assetCount: z.number().int(),
  })
  .describe('Over the whole report, every page')
  .meta({ id: 'CostReportTotals' });

export const CostReportResponse = z.object({
  ok: z.literal(true),
  currency: z.string(),
  from: dateTime(),
  to: dateTime(),
  groupBy: z.enum(GROUP_BY),
  rows: z.array(CostReportRow),
  totals: CostReportTotals,
  nextCursor: z.string().nullable(),
});

export const ScheduleYear = z.object({
  year: z.number().int(),
  start: dateTime(),
  end: dateTime(),
  opening: z.number(),
  depreciation: z.number(),
  closing: z.number(),
});

export const DepreciationResponse = z
  .object({
    ok: z.literal(true),
    assetId: z.string(),
    currency: z.string(),
    method: z.enum(METHODS).describe('NONE when the asset lacks a purchase cost, date or useful life'),
    purchaseCost: z.number().nullable(),
    purchaseDate: dateTime().nullable(),
    usefulLifeYears: z.number().int().nullable(),
    salvageValue: z.number(),
    bookValue: z.number().nullable().describe('Today, prorated by days; null for NONE'),
    schedule: z.array(ScheduleYear).describe('One row per year of life from purchaseDate; empty for NONE'),
  })
  .meta({ id: 'Depreciation' });

export const COST_CSV_CONTENT = {
  'text/csv': {
    schema: {
      type: 'string',
      description: 'format=csv: a header of the JSON field names (fuelEconomy flattened) and one line per row',
    },
    example:
      'key,name,assetCount,fuel,parts,labor,repairs,expenses,depreciation,total,meterStart,meterEnd,meterDelta,meterUnit,costPerMeterUnit,fuelVolumeLiters,fuelEconomy.litersPerHour,fuelEconomy.kmPerLiter,fuelEconomy.mpgUs\r\n',
  },
};
