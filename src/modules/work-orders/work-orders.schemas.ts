import { z } from 'zod';
import { LaborLine, PartLine, WorkOrderCosts } from './work-order-lines.schemas.ts';
import type { WorkOrder } from '../../generated/prisma/client.ts';
import {
  csvEnum,
  cursorQuery,
  dateTime,
  dateTimeInput,
  iso,
  limitQuery,
  optionalText,
  requiredText,
} from '../../core/schemas.ts';

export const WORK_ORDER_STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD', 'CANCELED', 'DONE'] as const;
export const ACTIVE_STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD'] as const;
/** Low to high, like the database enum. */
export const WORK_ORDER_PRIORITIES = ['LOW', 'NORMAL', 'HIGH', 'URGENT'] as const;
export type WorkOrderStatusWire = (typeof WORK_ORDER_STATUSES)[number];
export type WorkOrderPriorityWire = (typeof WORK_ORDER_PRIORITIES)[number];

const id = () => z.string().min(1).max(100).nullable().optional();
const hours = () => z.number().nonnegative().max(100_000).nullable().optional();
const money = () => z.number().nonnegative().max(1e12).nullable().optional();

// ---- requests

export const CreateWorkOrderBody = z.object({
  title: requiredText(200).optional().describe('Default "Work order #<number>"'),
  description: optionalText(5000),
  status: z
    .enum(WORK_ORDER_STATUSES, { error: () => `must be one of ${WORK_ORDER_STATUSES.join(', ')}` })
    .optional()
    .describe('Default OPEN. Created as DONE, the order is completed at once (workorder.completed)'),
  priority: z
    .enum(WORK_ORDER_PRIORITIES, { error: () => `must be one of ${WORK_ORDER_PRIORITIES.join(', ')}` })
    .optional()
    .describe('Default NORMAL'),
  assetId: id().describe("Defaults to the flag's asset when flagId is given"),
  projectId: id(),
  flagId: id().describe('The flag this work order fixes; closing the order with a repair resolves it'),
  assignedToId: id().describe('User id of the assignee'),
  dueAt: dateTimeInput().nullable().optional(),
  estimateLaborHours: hours(),
  estimateCost: money(),
  serviceReminderIds: z
    .array(z.string().min(1).max(100))
    .max(100)
    .nullable()
    .optional()
    .describe(
      "Service reminders this order covers (same organisation, and the same asset when the order has one); when the order becomes DONE they complete at the asset's current reading",
    ),
});
export type CreateWorkOrderInput = z.output<typeof CreateWorkOrderBody>;

/** Enum fields of a PATCH are plain strings: values outside the enum are dropped, not rejected (spec). */
const lenientEnum = (values: readonly string[]) =>
  z
    .string()
    .max(100)
    .nullable()
    .optional()
    .describe(
      `One of ${values.join(', ')}; the server ignores any other value (published as the enum so typed clients catch typos)`,
    )
    .meta({ anyOf: [{ type: 'string', enum: [...values] }, { type: 'null' }] });

export const UpdateWorkOrderBody = z
  .object({
    title: requiredText(200).optional(),
    description: optionalText(5000),
    status: lenientEnum(WORK_ORDER_STATUSES),
    priority: lenientEnum(WORK_ORDER_PRIORITIES),
    assignedToId: id(),
    assetId: id(),
    projectId: id(),
    flagId: id(),
    dueAt: dateTimeInput().nullable().optional(),
    estimateLaborHours: hours(),
    estimateCost: money(),
    serviceReminderIds: z
      .array(z.string().min(1).max(100))
      .max(100)
      .nullable()
      .optional()
      .describe(
        "Replaces the service reminders this order covers ([] or null: none) (same organisation, and the same asset when the order has one); when the order becomes DONE they complete at the asset's current reading",
      ),
  })
  .describe(
    'Any subset of the fields; omitted fields are unchanged, null clears a nullable field, unknown fields are ignored',
  )
  .meta({ minProperties: 1 });
export type UpdateWorkOrderInput = z.output<typeof UpdateWorkOrderBody>;

export const ListWorkOrdersQuery = z.object({
  status: csvEnum(WORK_ORDER_STATUSES, ACTIVE_STATUSES).describe(
    'Comma-separated statuses; unknown values are ignored; default the active queue OPEN,ASSIGNED,IN_PROGRESS,ON_HOLD',
  ),
  priority: csvEnum(WORK_ORDER_PRIORITIES, WORK_ORDER_PRIORITIES),
  assignedToId: z.string().min(1).max(100).optional(),
  assetId: z.string().min(1).max(100).optional(),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type ListWorkOrdersFilter = z.output<typeof ListWorkOrdersQuery>;

// ---- responses

export const WorkOrderRow = z
  .object({
    id: z.string(),
    number: z.number().int().describe('Per-organisation sequence: 1, 2, 3... without gaps'),
    assetId: z.string().nullable(),
    projectId: z.string().nullable(),
    flagId: z.string().nullable(),
    toolId: z.string().nullable().describe('Set when the order was opened by a tool check-in or report'),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(WORK_ORDER_STATUSES),
    priority: z.enum(WORK_ORDER_PRIORITIES),
    dueAt: dateTime().nullable(),
    estimateLaborHours: z.number().nullable(),
    estimateCost: z.number().nullable(),
    createdById: z.string(),
    assignedToId: z.string().nullable(),
    completedAt: dateTime().nullable().describe('When the order became DONE'),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'WorkOrderRow' });

export const WorkOrderDetail = WorkOrderRow.extend({
  repairSummary: z
    .object({
      count: z.number().int(),
      totalLaborHours: z.number(),
      totalCost: z.number(),
    })
    .describe('Sums over the repairs logged against this work order'),
  serviceReminderIds: z.array(z.string()).describe('Service reminders this order covers'),
  parts: z.array(PartLine).describe('Parts issued to the order, oldest first, each at its frozen cost'),
  labor: z.array(LaborLine).describe('Labour lines, oldest first'),
  costs: WorkOrderCosts,
}).meta({ id: 'WorkOrderDetail' });

export const ListWorkOrdersResponse = z.object({
  ok: z.literal(true),
  workOrders: z.array(WorkOrderRow),
  nextCursor: z.string().nullable(),
});
export const WorkOrderCreatedResponse = z.object({
  ok: z.literal(true),
  workOrderId: z.string(),
  number: z.number().int(),
});
export const WorkOrderIdResponse = z.object({ ok: z.literal(true), workOrderId: z.string() });
export const WorkOrderDetailResponse = z.object({
  ok: z.literal(true),
  currency: z.string().describe("ISO 4217 code of the order's costs"),
  workOrder: WorkOrderDetail,
});

// ---- mapping

export function toWorkOrderRow(w: WorkOrder): z.input<typeof WorkOrderRow> {
  return {
    id: w.id,
    number: w.number,
    assetId: w.assetId,
    projectId: w.projectId,
    flagId: w.flagId,
    toolId: w.toolId,
    title: w.title,
    description: w.description,
    status: w.status,
    priority: w.priority,
    dueAt: iso(w.dueAt),
    estimateLaborHours: w.estimateLaborHours,
    estimateCost: w.estimateCost,
    createdById: w.createdById,
    assignedToId: w.assignedToId,
    completedAt: iso(w.completedAt),
    createdAt: w.createdAt.toISOString(),
    updatedAt: w.updatedAt.toISOString(),
  };
}
