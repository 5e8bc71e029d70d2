import { z } from 'zod';
import type { Flag } from '../../generated/prisma/client.ts';
import { csvEnum, cursorQuery, dateTime, iso, limitQuery, optionalText } from '../../core/schemas.ts';

export const FLAG_SEVERITIES = ['RED', 'YELLOW', 'AUTO_PM'] as const;
export const FLAG_STATUSES = ['OPEN', 'IN_PROGRESS', 'RESOLVED'] as const;
export const RAISABLE_SEVERITIES = ['YELLOW', 'RED'] as const;

export const FLAG_NOTE_MAX = 500;
export const RESOLUTION_NOTE_MAX = 2000;

// ---- requests

const GeoBody = z
  .object({
    lat: z.number().min(-90).max(90),
    lng: z.number().min(-180).max(180),
    accuracyM: z.number().min(0).max(100_000).nullable().optional(),
  })
  .describe('Where the flag was raised: lat -90..90, lng -180..180, accuracyM 0..100000 metres');

export const CreateFlagBody = z.object({
  assetId: z.string().min(1).max(100),
  severity: z.enum(RAISABLE_SEVERITIES, {
    error: (i) =>
      i.input === undefined
        ? 'is required'
        : i.input === 'AUTO_PM'
          ? 'AUTO_PM flags are raised only by the system'
          : 'must be one of YELLOW, RED',
  }),
  note: optionalText(FLAG_NOTE_MAX),
  photoUrl: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .nullable()
    .optional()
    .describe('Link to a photo of the defect'),
  photoAttachmentId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("An image uploaded on the flag's asset (POST /attachments); flag.created's photoUrl then links to it"),
  geo: GeoBody.nullable().optional(),
});
export type CreateFlagInput = z.output<typeof CreateFlagBody>;

export const UpdateFlagBody = z
  .object({
    status: z
      .string()
      .optional()
      .describe('Only RESOLVED is accepted: flags cannot be re-opened or moved to another status'),
    resolutionNote: optionalText(RESOLUTION_NOTE_MAX).describe('Required (and specific) for RED flags'),
    returnToServiceConfirmed: z.boolean().optional().describe('Must be true to resolve a RED flag'),
  })
  .describe('Resolves the flag');
export type UpdateFlagInput = z.output<typeof UpdateFlagBody>;

export const ListFlagsQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  severity: csvEnum(FLAG_SEVERITIES, FLAG_SEVERITIES),
  status: csvEnum(FLAG_STATUSES, ['OPEN']).describe(
    'Comma-separated subset of OPEN, IN_PROGRESS, RESOLVED; default OPEN; unknown values are ignored',
  ),
  assetId: z.string().min(1).max(100).optional(),
});
export type ListFlagsInput = z.output<typeof ListFlagsQuery>;

// ---- responses

export const FlagRow = z
  .object({
    id: z.string(),
    assetId: z.string(),
    severity: z.enum(FLAG_SEVERITIES),
    status: z.enum(FLAG_STATUSES),
    note: z.string().nullable(),
    photoUrl: z.string().nullable(),
    raisedById: z.string().describe('User id, or "system" for AUTO_PM flags'),
    resolvedById: z.string().nullable(),
    resolvedAt: dateTime().nullable(),
    resolutionNote: z.string().nullable(),
    returnToServiceConfirmed: z.boolean(),
    lat: z.number().nullable(),
    lng: z.number().nullable(),
    accuracyM: z.number().nullable(),
    pmDueReading: z.number().nullable().describe('AUTO_PM only: the service point the meter crossed'),
    inspectionId: z.string().nullable().describe('The inspection whose failed item opened the flag'),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'FlagRow' });

const FlagActor = z.object({ userId: z.string().nullable(), name: z.string().nullable() });

export const FlagDetail = FlagRow.extend({
  asset: z.object({ id: z.string(), nickname: z.string() }),
  raisedBy: FlagActor,
  resolvedBy: FlagActor.nullable(),
}).meta({ id: 'FlagDetail' });

export const ListFlagsResponse = z.object({
  ok: z.literal(true),
  flags: z.array(FlagRow),
  nextCursor: z.string().nullable(),
});
export const FlagIdResponse = z.object({ ok: z.literal(true), flagId: z.string() });
export const FlagDetailResponse = z.object({ ok: z.literal(true), flag: FlagDetail });
export const FlagResolvedResponse = z.object({
  ok: z.literal(true),
  flagId: z.string(),
  status: z.enum(FLAG_STATUSES),
});

// ---- mapping

export function toFlagRow(f: Flag): z.input<typeof FlagRow> {
  return {
    id: f.id,
    assetId: f.assetId,
    severity: f.severity,
    status: f.status,
    note: f.note,
    photoUrl: f.photoUrl,
    raisedById: f.raisedById,
    resolvedById: f.resolvedById,
    resolvedAt: iso(f.resolvedAt),
    resolutionNote: f.resolutionNote,
    returnToServiceConfirmed: f.returnToServiceConfirmed,
    lat: f.lat,
    lng: f.lng,
    accuracyM: f.accuracyM,
    pmDueReading: f.pmDueReading,
    inspectionId: f.inspectionId,
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}
