import { z } from 'zod';
import type { ServiceTask } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';

export const CreateServiceTaskBody = z
  .object({ name: requiredText(200), description: optionalText(5000) })
  .describe("An entry of the organisation's catalogue of services, e.g. Engine oil and filter");
export type CreateServiceTaskInput = z.output<typeof CreateServiceTaskBody>;

export const UpdateServiceTaskBody = z
  .object({ name: requiredText(200).optional(), description: optionalText(5000) })
  .describe('Any subset; a new name shows at once on every reminder and program item of the task')
  .meta({ minProperties: 1 });
export type UpdateServiceTaskInput = z.output<typeof UpdateServiceTaskBody>;

export const ListServiceTasksQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

export const ServiceTaskRow = z
  .object({
    id: z.string(),
    serviceTaskId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'ServiceTaskRow' });

export const ServiceTaskDetail = ServiceTaskRow.extend({
  reminderCount: z.number().int().describe('Reminders scheduling this task'),
  programItemCount: z.number().int().describe('Program items naming this task'),
}).meta({ id: 'ServiceTaskDetail' });

export const ListServiceTasksResponse = z.object({
  ok: z.literal(true),
  serviceTasks: z.array(ServiceTaskRow),
  nextCursor: z.string().nullable(),
});
export const ServiceTaskIdResponse = z.object({ ok: z.literal(true), serviceTaskId: z.string() });
export const ServiceTaskDetailResponse = z.object({ ok: z.literal(true), serviceTask: ServiceTaskDetail });

export function toServiceTaskRow(t: ServiceTask): z.input<typeof ServiceTaskRow> {
  return {
    id: t.id,
    serviceTaskId: t.id,
    name: t.name,
    description: t.description,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}
