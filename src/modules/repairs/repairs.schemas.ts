import { z } from 'zod';
import type { Repair } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, dateTimeInput, limitQuery, optionalText } from '../../core/schemas.ts';

const id = () => z.string().min(1).max(100).nullable().optional();

// ---- requests

export const CreateRepairBody = z
  .object({
    assetId: id().describe("Required unless workOrderId is given; defaults to the work order's asset"),
    workOrderId: id().describe('Required unless assetId is given; the work order becomes DONE'),
    laborHours: z.number().nonnegative().max(100_000).nullable().optional(),
    cost: z.number().nonnegative().max(1e12).nullable().optional(),
    parts: optionalText(5000),
    notes: optionalText(5000),
  })
  .meta({ anyOf: [{ required: ['assetId'] }, { required: ['workOrderId'] }] });
export type CreateRepairInput = z.output<typeof CreateRepairBody>;

const filterId = z.string().min(1).max(100).optional();
export const ListRepairsQuery = z.object({
  assetId: filterId,
  projectId: filterId,
  workOrderId: filterId,
  since: dateTimeInput().optional().describe('Only repairs created at or after this time'),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type ListRepairsFilter = z.output<typeof ListRepairsQuery>;

// ---- responses

export const RepairRow = z
  .object({
    id: z.string(),
    assetId: z.string().nullable(),
    workOrderId: z.string().nullable(),
    projectId: z.string().nullable().describe('Taken from the work order'),
    laborHours: z.number().nullable(),
    cost: z.number().nullable(),
    parts: z.string().nullable(),
    notes: z.string().nullable(),
    createdById: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'RepairRow' });

export const RepairDetail = RepairRow.extend({
  meta: z
    .record(z.string(), z.unknown())
    .describe(
      'Server-maintained annotations; costAnomaly = {checkedAt, verdict NORMAL|ANOMALOUS|INSUFFICIENT_HISTORY, ...} once the check ran',
    ),
}).meta({ id: 'RepairDetail' });

export const ListRepairsResponse = z.object({
  ok: z.literal(true),
  repairs: z.array(RepairRow),
  nextCursor: z.string().nullable(),
});
export const RepairIdResponse = z.object({ ok: z.literal(true), repairId: z.string() });
export const RepairDetailResponse = z.object({ ok: z.literal(true), repair: RepairDetail });

// ---- mapping

export function toRepairRow(r: Repair): z.input<typeof RepairRow> {
  return {
    id: r.id,
    assetId: r.assetId,
    workOrderId: r.workOrderId,
    projectId: r.projectId,
    laborHours: r.laborHours,
    cost: r.cost,
    parts: r.parts,
    notes: r.notes,
    createdById: r.createdById,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export function toRepairDetail(r: Repair): z.input<typeof RepairDetail> {
  const meta =
    r.meta && typeof r.meta === 'object' && !Array.isArray(r.meta) ? (r.meta as Record<string, unknown>) : {};
  return { ...toRepairRow(r), meta };
}
