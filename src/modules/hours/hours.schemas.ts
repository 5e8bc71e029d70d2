import { batchResponse } from '../../core/batch.ts';
import { z } from 'zod';
import type { MeterLog } from '../../generated/prisma/client.ts';
import { csvEnum, cursorQuery, dateTime, dateTimeInput, iso, limitQuery, optionalText } from '../../core/schemas.ts';

export const READING_SOURCES = ['api', 'telematics', 'inspection', 'fuel', 'import'] as const;
export const REVIEW_STATUSES = ['NONE', 'PENDING', 'APPROVED', 'REJECTED'] as const;
export const FUEL_UNITS = ['GALLON', 'LITER'] as const;
export const IDEMPOTENCY_KEY_MAX = 128;

// ---- requests

export const CreateHoursBody = z
  .object({
    assetId: z.string().min(1).max(100),
    hoursReading: z
      .number()
      .min(0)
      .max(1e9)
      .optional()
      .describe('Meter reading (hours or miles); required unless the asset has meter NONE'),
    state: optionalText(100).describe('Free-form state (e.g. "parked at yard"); required for assets with meter NONE'),
    note: optionalText(1000).describe('Required when the reading is lower than the previous one'),
    clientMutationId: z
      .string()
      .min(1)
      .max(IDEMPOTENCY_KEY_MAX)
      .nullable()
      .optional()
      .describe('Idempotency key; the Idempotency-Key header wins'),
    loggedAt: dateTimeInput()
      .optional()
      .describe('When the reading was taken (default now); at most 5 minutes in the future'),
    projectId: z.string().min(1).max(100).nullable().optional(),
    loggedByDeviceId: optionalText(128),
    fuelVolume: z.number().min(0).max(1e6).nullable().optional(),
    fuelUnit: z.enum(FUEL_UNITS).nullable().optional().describe('Defaults to GALLON when fuelVolume is set'),
    fuelCostTotal: z.number().min(0).max(1e9).nullable().optional(),
    lat: z.number().min(-90).max(90).nullable().optional(),
    lng: z.number().min(-180).max(180).nullable().optional(),
  })
  .meta({ id: 'HoursLogCreate' });
export type CreateHoursInput = z.output<typeof CreateHoursBody>;

export const IdempotencyHeaders = z.looseObject({
  'idempotency-key': z
    .string()
    .meta({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX })
    .optional()
    .describe('Opaque key of up to 128 characters; a repeat returns the original logId and writes nothing'),
});

export const ReviewHoursBody = z.object({
  reviewStatus: z.enum(['APPROVED', 'REJECTED']).describe('The manager decision on a log awaiting review (PENDING)'),
});

export const ListHoursQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  assetId: z.string().min(1).max(100).optional(),
  since: dateTimeInput().optional().describe('Only logs with loggedAt at or after this time'),
  reviewStatus: csvEnum(REVIEW_STATUSES, REVIEW_STATUSES).describe(
    'Comma-separated subset of NONE, PENDING, APPROVED, REJECTED (default all); PENDING is the review queue',
  ),
});
export type ListHoursInput = z.output<typeof ListHoursQuery>;

// ---- responses

export const HoursLog = z
  .object({
    id: z.string(),
    assetId: z.string(),
    projectId: z.string().nullable(),
    loggedById: z.string().nullable(),
    loggedByDeviceId: z.string().nullable(),
    hoursReading: z.number().describe('0 on state-only entries'),
    delta: z
      .number()
      .describe(
        'This reading minus the previous reading on the asset (0 for the first reading and state-only entries)',
      ),
    state: z.string().nullable(),
    fuelVolume: z.number().nullable(),
    fuelUnit: z.string().nullable(),
    fuelCostTotal: z.number().nullable(),
    note: z.string().nullable(),
    lat: z.number().nullable(),
    lng: z.number().nullable(),
    clientMutationId: z.string().nullable(),
    reviewStatus: z.enum(REVIEW_STATUSES),
    reviewReason: z.string().nullable().describe('Why the log was routed to review'),
    reviewedById: z.string().nullable().describe('Who approved or rejected the log'),
    reviewedAt: dateTime().nullable(),
    autoFlagId: z.string().nullable(),
    source: z
      .enum(READING_SOURCES)
      .describe(
        'api (sent to /hours), telematics (read off a telematics feed), inspection (a meter item), fuel (the reading of a fuel entry) or import (a row of an import)',
      ),
    sourceId: z
      .string()
      .nullable()
      .describe(
        'The telematics connection (source telematics), the inspection (source inspection), the fuel entry (source fuel) or the import (source import); else null',
      ),
    loggedAt: dateTime(),
    createdAt: dateTime(),
  })
  .meta({ id: 'HoursLog' });

export const HoursLogDetail = HoursLog.extend({
  asset: z.object({ id: z.string(), nickname: z.string(), meterType: z.string(), meterUnit: z.string() }),
}).meta({ id: 'HoursLogDetail' });

export const ListHoursResponse = z.object({
  ok: z.literal(true),
  hoursLogs: z.array(HoursLog),
  nextCursor: z.string().nullable(),
});
export const HoursDetailResponse = z.object({ ok: z.literal(true), hoursLog: HoursLogDetail });
export const HoursCreatedResponse = z.object({
  ok: z.literal(true),
  logId: z.string(),
  autoFlagId: z.string().nullable().describe('The AUTO_PM flag this reading opened, else null'),
  delta: z.number(),
  reviewStatus: z.enum(REVIEW_STATUSES),
  replayed: z.boolean().describe('True when this is a repeat of an earlier request with the same idempotency key'),
});
export const HoursReviewResponse = z.object({
  ok: z.literal(true),
  logId: z.string(),
  reviewStatus: z.enum(REVIEW_STATUSES),
  autoFlagId: z.string().nullable().describe('AUTO_PM flag opened by approving the reading, else null'),
});
export const HoursBatchResponse = batchResponse('HoursLog', {
  logId: z.string(),
  autoFlagId: z.string().nullable().optional(),
  delta: z.number().optional(),
  reviewStatus: z.enum(REVIEW_STATUSES).optional(),
  replayed: z.boolean().optional(),
});

// ---- mapping

export function toHoursLog(l: MeterLog): z.input<typeof HoursLog> {
  return {
    id: l.id,
    assetId: l.assetId,
    projectId: l.projectId,
    loggedById: l.loggedById,
    loggedByDeviceId: l.loggedByDeviceId,
    hoursReading: l.hoursReading,
    delta: l.delta,
    state: l.state,
    fuelVolume: l.fuelVolume,
    fuelUnit: l.fuelUnit,
    fuelCostTotal: l.fuelCostTotal,
    note: l.note,
    lat: l.lat,
    lng: l.lng,
    clientMutationId: l.clientMutationId,
    reviewStatus: l.reviewStatus,
    reviewReason: l.reviewReason,
    reviewedById: l.reviewedById,
    reviewedAt: iso(l.reviewedAt),
    autoFlagId: l.autoFlagId,
    source: l.source as (typeof READING_SOURCES)[number],
    sourceId: l.sourceId,
    loggedAt: l.loggedAt.toISOString(),
    createdAt: l.createdAt.toISOString(),
  };
}
