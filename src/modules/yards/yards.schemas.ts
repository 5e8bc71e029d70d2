import { batchResponse } from '../../core/batch.ts';
import { z } from 'zod';
import type { Yard } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';

const lat = () =>
  z.number().min(-90, 'must be between -90 and 90').max(90, 'must be between -90 and 90').nullable().optional();
const lng = () =>
  z.number().min(-180, 'must be between -180 and 180').max(180, 'must be between -180 and 180').nullable().optional();

const yardFields = {
  lat: lat().describe('Latitude, -90..90; send together with lng'),
  lng: lng().describe('Longitude, -180..180; send together with lat'),
  address: optionalText(500),
  notes: optionalText(5000),
};

/** A position is both coordinates or neither: half a position cannot be placed on a map. */
export const coordinatesPaired = (p: { lat?: number | null; lng?: number | null }) =>
  (p.lat == null) === (p.lng == null);
export const UNPAIRED_ERROR = 'lat and lng must be sent together';

export const CreateYardBody = z
  .object({ name: requiredText(200).describe('Unique within the organisation'), ...yardFields })
  .refine(coordinatesPaired, { message: UNPAIRED_ERROR, path: ['lng'] })
  .describe('Yard fields; name is required; unknown fields are ignored');
export type CreateYardInput = z.output<typeof CreateYardBody>;

export const UPDATABLE_YARD_FIELDS = ['name', 'lat', 'lng', 'address', 'notes'] as const;
export const UpdateYardBody = z
  .object({ name: requiredText(200).optional(), ...yardFields })
  .describe('Any subset of the yard fields; null clears a nullable field; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdateYardInput = z.output<typeof UpdateYardBody>;

export const ListYardsQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

// ---- responses

export const YardRow = z
  .object({
    id: z.string(),
    name: z.string(),
    lat: z.number().nullable(),
    lng: z.number().nullable(),
    address: z.string().nullable(),
    notes: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'YardRow' });

export const YardDetail = YardRow.extend({
  assetCount: z.number().int().describe('Assets whose yardId is this yard'),
  toolCount: z.number().int().describe('Tools whose assignedYardId is this yard'),
}).meta({ id: 'YardDetail' });

export const ListYardsResponse = z.object({
  ok: z.literal(true),
  yards: z.array(YardRow),
  nextCursor: z.string().nullable(),
});
export const CreateYardResponse = z.object({ ok: z.literal(true), yardId: z.string(), createdAt: dateTime() });
export const YardIdResponse = z.object({ ok: z.literal(true), yardId: z.string() });
export const YardDetailResponse = z.object({ ok: z.literal(true), yard: YardDetail });
export const DeleteYardResponse = z.object({
  ok: z.literal(true),
  yardId: z.string(),
  unassignedAssets: z.number().int().describe('Assets whose yardId was set to null'),
  unassignedTools: z.number().int().describe('Tools whose assignedYardId was set to null'),
});
export const YardBatchResponse = batchResponse('Yard', { yardId: z.string(), createdAt: dateTime() });

export function toYardRow(y: Yard): z.input<typeof YardRow> {
  return {
    id: y.id,
    name: y.name,
    lat: y.lat,
    lng: y.lng,
    address: y.address,
    notes: y.notes,
    createdAt: y.createdAt.toISOString(),
    updatedAt: y.updatedAt.toISOString(),
  };
}
