import { z } from 'zod';
import type { ServiceProgram, ServiceProgramItem } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';
import { intervalFields } from '../service-reminders/service-reminders.schemas.ts';

export const APPLY_CAP = 1000;
export const ITEMS_CAP = 50;

const ProgramItemInput = z.object({
  id: z.string().min(1).max(100).optional().describe('On PATCH: the item to change; omit it for a new item'),
  serviceTaskId: z.string().min(1).max(100),
  ...intervalFields,
});
export type ProgramItemInput = z.output<typeof ProgramItemInput>;

const items = z.array(ProgramItemInput).min(1, 'send at least one item').max(ITEMS_CAP);

export const CreateProgramBody = z
  .object({
    name: requiredText(200),
    description: optionalText(5000),
    autoWorkOrder: z
      .boolean()
      .optional()
      .describe('Open one work order per reminder cycle when a reminder of the program turns DUE_SOON or OVERDUE'),
    items: items.describe('One reminder per item on each asset the program is applied to'),
  })
  .describe('A set of service schedules to apply to many assets');
export type CreateProgramInput = z.output<typeof CreateProgramBody>;

export const UpdateProgramBody = z
  .object({
    name: requiredText(200).optional(),
    description: optionalText(5000),
    autoWorkOrder: z.boolean().optional(),
    items: items
      .optional()
      .describe(
        'The full item list: an entry with an id changes that item (and its reminders), one without adds an item (and its reminders on every applied asset); an item left out is removed with its reminders',
      ),
  })
  .meta({ minProperties: 1 });
export type UpdateProgramInput = z.output<typeof UpdateProgramBody>;

export const ApplyProgramBody = z.object({
  assetIds: z.array(z.string().min(1).max(100)).min(1).max(APPLY_CAP).describe(`Up to ${APPLY_CAP} assets`),
});

export const RemoveAssetParams = z.object({ id: z.string().min(1), assetId: z.string().min(1) });
export const RemoveAssetQuery = z.object({
  keepReminders: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .describe("true: the asset's reminders of the program stay, detached from it; default false: they are deleted"),
});

export const ListProgramsQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

// ---- responses

export const ProgramItemRow = z
  .object({
    id: z.string(),
    serviceTaskId: z.string(),
    serviceTaskName: z.string(),
    meterInterval: z.number().nullable(),
    dayInterval: z.number().int().nullable(),
    dueSoonMeter: z.number().nullable(),
    dueSoonDays: z.number().int().nullable(),
  })
  .meta({ id: 'ServiceProgramItem' });

export const ProgramRow = z
  .object({
    id: z.string(),
    serviceProgramId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    autoWorkOrder: z.boolean(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'ServiceProgramRow' });

export const ProgramDetail = ProgramRow.extend({
  items: z.array(ProgramItemRow),
  assetCount: z.number().int().describe('Assets the program is applied to'),
}).meta({ id: 'ServiceProgramDetail' });

export const ListProgramsResponse = z.object({
  ok: z.literal(true),
  servicePrograms: z.array(ProgramRow),
  nextCursor: z.string().nullable(),
});
export const ProgramIdResponse = z.object({ ok: z.literal(true), serviceProgramId: z.string() });
export const ProgramDetailResponse = z.object({ ok: z.literal(true), serviceProgram: ProgramDetail });
export const ApplyProgramResponse = z.object({
  ok: z.literal(true),
  serviceProgramId: z.string(),
  summary: z.object({
    received: z.number().int(),
    applied: z.number().int(),
    alreadyApplied: z.number().int(),
    notFound: z.number().int(),
    remindersCreated: z.number().int(),
  }),
  appliedAssetIds: z.array(z.string()),
  alreadyAppliedAssetIds: z.array(z.string()),
  notFoundAssetIds: z.array(z.string()).describe('Unknown ids and assets of other organisations'),
});
export const RemoveAssetResponse = z.object({
  ok: z.literal(true),
  serviceProgramId: z.string(),
  assetId: z.string(),
  remindersDeleted: z.number().int(),
  remindersDetached: z.number().int(),
});

export function toProgramRow(p: ServiceProgram): z.input<typeof ProgramRow> {
  return {
    id: p.id,
    serviceProgramId: p.id,
    name: p.name,
    description: p.description,
    autoWorkOrder: p.autoWorkOrder,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

export function toItemRow(i: ServiceProgramItem & { serviceTask: { name: string } }): z.input<typeof ProgramItemRow> {
  return {
    id: i.id,
    serviceTaskId: i.serviceTaskId,
    serviceTaskName: i.serviceTask.name,
    meterInterval: i.meterInterval,
    dayInterval: i.dayInterval,
    dueSoonMeter: i.dueSoonMeter,
    dueSoonDays: i.dueSoonDays,
  };
}
