import { batchResponse } from '../../core/batch.ts';
import { z } from 'zod';
import type { Asset } from '../../generated/prisma/client.ts';
import { isoFromUtcText } from '../../db/utc-text.ts';
import { bookValue } from './assets.rules.ts';
import { dec, moneyAmount, toWire } from '../../core/money.ts';
import {
  cursorQuery,
  dateTime,
  dateTimeInput,
  iso,
  limitQuery,
  optionalText,
  requiredText,
} from '../../core/schemas.ts';

export const ASSET_CLASSES = ['on-road', 'off-road', 'trailer'] as const;
export const METER_TYPES = ['HOURS', 'ODOMETER', 'NONE'] as const;
export const LIFECYCLE_STATUSES = ['IN_SERVICE', 'OUT_OF_SERVICE', 'ARCHIVED', 'SOLD'] as const;
export const DEPRECIATION_METHODS = ['NONE', 'STRAIGHT_LINE', 'DECLINING_BALANCE'] as const;
export type AssetClassWire = (typeof ASSET_CLASSES)[number];
export type MeterTypeWire = (typeof METER_TYPES)[number];

/** Default meter per class (spec) and the unit each meter reads in. */
export const DEFAULT_METER: Record<AssetClassWire, MeterTypeWire> = {
  'on-road': 'ODOMETER',
  'off-road': 'HOURS',
  trailer: 'NONE',
};
export const METER_UNIT: Record<MeterTypeWire, string> = { HOURS: 'hrs', ODOMETER: 'mi', NONE: 'none' };

const CLASS_TO_DB = { 'on-road': 'ON_ROAD', 'off-road': 'OFF_ROAD', trailer: 'TRAILER' } as const;
const CLASS_FROM_DB = { ON_ROAD: 'on-road', OFF_ROAD: 'off-road', TRAILER: 'trailer' } as const;
export const classToDb = (c: AssetClassWire) => CLASS_TO_DB[c];
export const classFromDb = (c: Asset['assetClass']) => CLASS_FROM_DB[c];

const money = () => z.number().nonnegative().max(1e12).nullable().optional();
const id = () => z.string().min(1).max(100).nullable().optional();

// ---- requests

export const CreateAssetBody = z.object({
  nickname: requiredText(200),
  assetClass: z.enum(ASSET_CLASSES, {
    error: (i) => (i.input === undefined ? 'is required' : `must be one of ${ASSET_CLASSES.join(', ')}`),
  }),
  customerAssetNumber: optionalText(100),
  vin: optionalText(64),
  serial: optionalText(100),
  meterType: z
    .enum(METER_TYPES)
    .optional()
    .describe('Defaults from assetClass: on-road ODOMETER, off-road HOURS, trailer NONE'),
  yardId: id(),
  pmInterval: z.number().positive().max(1e9).nullable().optional().describe('Service every N meter units'),
  pmBaselineReading: z
    .number()
    .nonnegative()
    .max(1e12)
    .nullable()
    .optional()
    .describe('Meter reading at the last service'),
});
export type CreateAssetInput = z.output<typeof CreateAssetBody>;

export const UPDATABLE_FIELDS = [
  'nickname',
  'customerAssetNumber',
  'licensePlate',
  'licenseState',
  'registrationExpiresAt',
  'insuranceExpiresAt',
  'purchaseCost',
  'purchaseDate',
  'depreciationMethod',
  'usefulLifeYears',
  'currentValue',
  'salvageValue',
  'lifecycleStatus',
  'soldAt',
  'soldPrice',
  'soldTo',
  'vin',
  'serial',
  'yardId',
  'pmInterval',
  'pmBaselineReading',
  'parentAssetId',
  'primaryOperatorId',
] as const;

export const UpdateAssetBody = z
  .object({
    nickname: requiredText(200).optional(),
    customerAssetNumber: optionalText(100),
    vin: optionalText(64),
    serial: optionalText(100),
    licensePlate: optionalText(32),
    licenseState: optionalText(32),
    registrationExpiresAt: dateTimeInput().nullable().optional(),
    insuranceExpiresAt: dateTimeInput().nullable().optional(),
    purchaseCost: money(),
    purchaseDate: dateTimeInput().nullable().optional(),
    depreciationMethod: z.enum(DEPRECIATION_METHODS).optional(),
    usefulLifeYears: z.number().int().min(1).max(100).nullable().optional(),
    currentValue: money(),
    salvageValue: moneyAmount({ max: 1e12 })
      .optional()
      .describe('Value at the end of the useful life, the floor of the depreciation schedule (default 0)'),
    lifecycleStatus: z.enum(LIFECYCLE_STATUSES).optional(),
    soldAt: dateTimeInput().nullable().optional(),
    soldPrice: money(),
    soldTo: optionalText(200),
    yardId: id(),
    pmInterval: z.number().positive().max(1e9).nullable().optional(),
    pmBaselineReading: z.number().nonnegative().max(1e12).nullable().optional(),
    parentAssetId: id(),
    primaryOperatorId: id(),
    fuelCardNumbers: z
      .array(z.string().trim().min(1).max(64))
      .max(50)
      .optional()
      .describe(
        "The fuel cards of the asset, replacing its list ([] removes them all); a card is one asset's (409 fuel_card_taken)",
      ),
  })
  .describe('Any subset of the fields; null clears a nullable field; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdateAssetInput = z.output<typeof UpdateAssetBody>;

export const ListAssetsQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

// ---- responses

export const AssetRow = z
  .object({
    id: z.string(),
    nickname: z.string(),
    customerAssetNumber: z.string().nullable(),
    assetClass: z.enum(ASSET_CLASSES),
    vin: z.string().nullable(),
    serial: z.string().nullable(),
    meterType: z.enum(METER_TYPES),
    meterUnit: z.string(),
    lifecycleStatus: z.enum(LIFECYCLE_STATUSES),
    yardId: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'AssetRow' });

/** The current checkout of an asset, shown on the detail and returned by checkout and check-in. */
export const AssetCheckoutState = z
  .object({
    toUserId: z.string().nullable(),
    toProjectId: z.string().nullable(),
    checkedOutAt: dateTime().nullable(),
    expectedReturnAt: dateTime().nullable(),
    note: z.string().nullable(),
  })
  .meta({ id: 'AssetCheckoutState' });

export const AssetDetail = AssetRow.extend({
  licensePlate: z.string().nullable(),
  licenseState: z.string().nullable(),
  registrationExpiresAt: dateTime().nullable(),
  insuranceExpiresAt: dateTime().nullable(),
  purchaseCost: z.number().nullable(),
  purchaseDate: dateTime().nullable(),
  depreciationMethod: z.enum(DEPRECIATION_METHODS),
  usefulLifeYears: z.number().int().nullable(),
  currentValue: z.number().nullable(),
  salvageValue: z.number().describe('Value at the end of the useful life (GET /assets/{id}/depreciation)'),
  soldAt: dateTime().nullable(),
  soldPrice: z.number().nullable(),
  soldTo: z.string().nullable(),
  pmInterval: z.number().nullable().describe('PM threshold: service every N meter units'),
  pmBaselineReading: z.number().nullable().describe('Meter reading at the last service'),
  pmNextDueReading: z.number().nullable().describe('pmBaselineReading + pmInterval'),
  lastMeterReading: z.number().nullable(),
  lastMeterAt: dateTime().nullable(),
  parentAssetId: z.string().nullable().describe('The asset this one is attached to (e.g. a trailer or implement)'),
  primaryOperatorId: z.string().nullable().describe('User id of the usual operator'),
  financialSummary: z.object({
    purchaseCost: z.number().nullable(),
    currentValue: z.number().nullable(),
    bookValue: z
      .number()
      .nullable()
      .describe('From purchaseCost, purchaseDate, usefulLifeYears and depreciationMethod'),
    totalRepairCost: z.number(),
    repairCount: z.number().int(),
  }),
  checkout: AssetCheckoutState.nullable().describe('Current checkout, or null when the asset is not checked out'),
  fuelCardNumbers: z.array(z.string()).describe('Fuel cards assigned to the asset (fuel-card imports match by them)'),
}).meta({ id: 'AssetDetail' });

export const ListAssetsResponse = z.object({
  ok: z.literal(true),
  assets: z.array(AssetRow),
  nextCursor: z.string().nullable(),
});
export const AssetIdResponse = z.object({ ok: z.literal(true), assetId: z.string() });
export const AssetDetailResponse = z.object({ ok: z.literal(true), asset: AssetDetail });
export const AssetBatchResponse = batchResponse('Asset', { assetId: z.string() });

// ---- mapping

type RowFields = Pick<
  Asset,
  | 'id'
  | 'nickname'
  | 'customerAssetNumber'
  | 'vin'
  | 'serial'
  | 'meterType'
  | 'meterUnit'
  | 'lifecycleStatus'
  | 'yardId'
> & {
  /** Prisma's enum name (ON_ROAD) or, from raw SQL, the stored value (on-road). */
  assetClass: Asset['assetClass'] | AssetClassWire;
  /** A Date from Prisma, or UTC text from the list's raw SQL (db/utc-text.ts). */
  createdAt: Date | string;
  updatedAt: Date | string;
};

const toWireClass = (c: RowFields['assetClass']): AssetClassWire =>
  (CLASS_FROM_DB as Record<string, AssetClassWire>)[c] ?? (c as AssetClassWire);
const isoOf = (d: Date | string) => (typeof d === 'string' ? isoFromUtcText(d) : d.toISOString());

export function toAssetRow(a: RowFields): z.input<typeof AssetRow> {
  return {
    id: a.id,
    nickname: a.nickname,
    customerAssetNumber: a.customerAssetNumber,
    assetClass: toWireClass(a.assetClass),
    vin: a.vin,
    serial: a.serial,
    meterType: a.meterType,
    meterUnit: a.meterUnit,
    lifecycleStatus: a.lifecycleStatus,
    yardId: a.yardId,
    createdAt: isoOf(a.createdAt),
    updatedAt: isoOf(a.updatedAt),
  };
}

export function toAssetDetail(
  a: Asset,
  repairs: { total: number; count: number },
  now = new Date(),
  fuelCardNumbers: string[] = [],
): z.input<typeof AssetDetail> {
  return {
    ...toAssetRow(a),
    licensePlate: a.licensePlate,
    licenseState: a.licenseState,
    registrationExpiresAt: iso(a.registrationExpiresAt),
    insuranceExpiresAt: iso(a.insuranceExpiresAt),
    purchaseCost: a.purchaseCost,
    purchaseDate: iso(a.purchaseDate),
    depreciationMethod: a.depreciationMethod,
    usefulLifeYears: a.usefulLifeYears,
    currentValue: a.currentValue,
    salvageValue: toWire(dec(a.salvageValue)),
    soldAt: iso(a.soldAt),
    soldPrice: a.soldPrice,
    soldTo: a.soldTo,
    pmInterval: a.pmInterval,
    pmBaselineReading: a.pmBaselineReading,
    pmNextDueReading: a.pmInterval != null ? (a.pmBaselineReading ?? 0) + a.pmInterval : null,
    lastMeterReading: a.lastMeterReading,
    lastMeterAt: iso(a.lastMeterAt),
    parentAssetId: a.parentAssetId,
    primaryOperatorId: a.primaryOperatorId,
    financialSummary: {
      purchaseCost: a.purchaseCost,
      currentValue: a.currentValue,
      bookValue: bookValue(a, now),
      totalRepairCost: repairs.total,
      repairCount: repairs.count,
    },
    checkout: toCheckoutState(a),
    fuelCardNumbers,
  };
}

type CheckoutColumns = Pick<
  Asset,
  'checkedOutToUserId' | 'checkedOutToProjectId' | 'checkedOutAt' | 'expectedReturnAt' | 'checkoutNote'
>;

export function toCheckoutState(a: CheckoutColumns): z.input<typeof AssetCheckoutState> | null {
  if (!a.checkedOutToUserId && !a.checkedOutToProjectId) return null;
  return {
    toUserId: a.checkedOutToUserId,
    toProjectId: a.checkedOutToProjectId,
    checkedOutAt: iso(a.checkedOutAt),
    expectedReturnAt: iso(a.expectedReturnAt),
    note: a.checkoutNote,
  };
}
