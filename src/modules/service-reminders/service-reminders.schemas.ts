import { z } from 'zod';
import type { ServiceCompletion, ServiceReminder } from '../../generated/prisma/client.ts';
import { csvEnum, cursorQuery, dateTime, dateTimeInput, iso, limitQuery, optionalText } from '../../core/schemas.ts';
import { NO_DUE, REMINDER_STATUSES } from './service-reminders.rules.ts';

const refId = () => z.string().min(1).max(100);
const meterAmount = () => z.number().positive('must be greater than 0').max(1e9);
const days = () => z.number().int('must be a whole number of days').positive('must be greater than 0').max(36_500);

/** The schedule of a reminder (or of a program item): each field optional, null clears it on PATCH. */
export const intervalFields = {
  meterInterval: meterAmount()
    .nullable()
    .optional()
    .describe("Due every this many meter units (the asset's meter: hours or distance)"),
  dayInterval: days().nullable().optional().describe('Due every this many days'),
  dueSoonMeter: z
    .number()
    .nonnegative()
    .max(1e9)
    .nullable()
    .optional()
    .describe('DUE_SOON this many meter units before the due reading (default 0)'),
  dueSoonDays: z
    .number()
    .int()
    .nonnegative()
    .max(36_500)
    .nullable()
    .optional()
    .describe('DUE_SOON this many days before the due date (default 0)'),
};

export const NEEDS_INTERVAL = 'send meterInterval, dayInterval or both';

export const CreateReminderBody = z
  .object({
    assetId: refId(),
    serviceTaskId: refId(),
    ...intervalFields,
    lastCompletedReading: z
      .number()
      .nonnegative()
      .nullable()
      .optional()
      .describe("Meter baseline; default the asset's current accepted reading (or its first one)"),
    lastCompletedAt: dateTimeInput().nullable().optional().describe('Calendar baseline; default now'),
  })
  .describe('A reminder of one service task on one asset, due by meter, by calendar, or whichever comes first');
export type CreateReminderInput = z.output<typeof CreateReminderBody>;

export const UpdateReminderBody = z
  .object({
    serviceTaskId: refId().optional(),
    ...intervalFields,
    lastCompletedReading: z.number().nonnegative().nullable().optional(),
    lastCompletedAt: dateTimeInput().nullable().optional(),
  })
  .describe('Any subset; null clears; at least one interval must remain. Re-evaluates the status at once')
  .meta({ minProperties: 1 });
export type UpdateReminderInput = z.output<typeof UpdateReminderBody>;

export const CompleteReminderBody = z
  .object({
    reading: z.number().nonnegative().nullable().optional().describe("Default the asset's current accepted reading"),
    at: dateTimeInput().nullable().optional().describe('Default now'),
    workOrderId: refId().nullable().optional(),
    note: optionalText(2000),
  })
  .describe('Records a service: the reminder counts its next due from this completion');
export type CompleteReminderInput = z.output<typeof CompleteReminderBody>;

export const SnoozeReminderBody = z
  .object({
    until: dateTimeInput().nullable().optional().describe('Snoozed until this instant'),
    untilReading: z.number().nonnegative().nullable().optional().describe('Snoozed until the meter reaches this'),
  })
  .describe('SNOOZED until the snooze ends (with both, whichever comes first); send null for both to end it');
export type SnoozeReminderInput = z.output<typeof SnoozeReminderBody>;

export const ListRemindersQuery = z.object({
  status: csvEnum(REMINDER_STATUSES, REMINDER_STATUSES).describe(
    'Comma-separated statuses (OK, DUE_SOON, OVERDUE, SNOOZED); unknown values are ignored; default every status',
  ),
  assetId: refId().optional(),
  serviceTaskId: refId().optional(),
  serviceProgramId: refId().optional(),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type ListRemindersFilter = z.output<typeof ListRemindersQuery>;

export const HistoryQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

// ---- responses

export const ServiceCompletionRow = z
  .object({
    id: z.string(),
    cycle: z.number().int().describe('The reminder cycle this completion closed (1 for the first)'),
    completedAt: dateTime(),
    reading: z.number().nullable(),
    workOrderId: z.string().nullable(),
    note: z.string().nullable(),
    completedById: z.string().nullable().describe('The user who recorded it (the key issuer)'),
    createdAt: dateTime(),
  })
  .meta({ id: 'ServiceCompletion' });

export const ServiceReminderRow = z
  .object({
    id: z.string(),
    serviceReminderId: z.string(),
    assetId: z.string(),
    serviceTaskId: z.string(),
    serviceTaskName: z.string().describe("The task's current name"),
    serviceProgramId: z.string().nullable(),
    status: z.enum(REMINDER_STATUSES),
    meterInterval: z.number().nullable(),
    dayInterval: z.number().int().nullable(),
    dueSoonMeter: z.number().nullable(),
    dueSoonDays: z.number().int().nullable(),
    lastCompletedReading: z.number().nullable().describe('Meter baseline of the current cycle'),
    lastCompletedAt: dateTime().nullable().describe('Calendar baseline of the current cycle'),
    nextDueReading: z.number().nullable().describe('null while the asset has no accepted reading'),
    nextDueAt: dateTime().nullable(),
    forecastDueAt: dateTime()
      .nullable()
      .describe(
        "When it falls (fell) due: the earlier of nextDueAt and the meter forecast from the asset's average daily use over the last 30 days; null when unknown",
      ),
    snoozedUntil: dateTime().nullable(),
    snoozedUntilReading: z.number().nullable(),
    cycle: z.number().int().describe('1, then +1 per completion'),
    assetRetired: z.boolean().describe('The asset is ARCHIVED or SOLD: frozen, out of the list, no events'),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'ServiceReminderRow' });

export const ServiceReminderDetail = ServiceReminderRow.extend({
  lastCompletion: ServiceCompletionRow.nullable(),
}).meta({ id: 'ServiceReminderDetail' });

export const ListRemindersResponse = z.object({
  ok: z.literal(true),
  serviceReminders: z.array(ServiceReminderRow),
  nextCursor: z.string().nullable(),
});
export const ReminderDetailResponse = z.object({ ok: z.literal(true), serviceReminder: ServiceReminderDetail });
export const ReminderCreatedResponse = z.object({
  ok: z.literal(true),
  serviceReminderId: z.string(),
  status: z.enum(REMINDER_STATUSES),
});
export const ReminderIdResponse = ReminderCreatedResponse;
export const ReminderCompletedResponse = ReminderCreatedResponse.extend({
  completionId: z.string().describe('The service history entry'),
  cycle: z.number().int().describe('The new cycle'),
});
export const ReminderDeletedResponse = z.object({ ok: z.literal(true), serviceReminderId: z.string() });
export const HistoryResponse = z.object({
  ok: z.literal(true),
  serviceReminderId: z.string(),
  history: z.array(ServiceCompletionRow).describe('Newest first'),
  nextCursor: z.string().nullable(),
});

// ---- mapping

export function toCompletionRow(c: ServiceCompletion): z.input<typeof ServiceCompletionRow> {
  return {
    id: c.id,
    cycle: c.cycle,
    completedAt: c.completedAt.toISOString(),
    reading: c.reading,
    workOrderId: c.workOrderId,
    note: c.note,
    completedById: c.completedById,
    createdAt: c.createdAt.toISOString(),
  };
}

export function toReminderRow(
  r: ServiceReminder,
  taskName: string,
  forecastDueAt: Date | null = r.dueKey.getTime() === NO_DUE.getTime() ? null : r.dueKey,
): z.input<typeof ServiceReminderRow> {
  return {
    id: r.id,
    serviceReminderId: r.id,
    assetId: r.assetId,
    serviceTaskId: r.serviceTaskId,
    serviceTaskName: taskName,
    serviceProgramId: r.serviceProgramId,
    status: r.status,
    meterInterval: r.meterInterval,
    dayInterval: r.dayInterval,
    dueSoonMeter: r.dueSoonMeter,
    dueSoonDays: r.dueSoonDays,
    lastCompletedReading: r.lastCompletedReading,
    lastCompletedAt: iso(r.lastCompletedAt),
    nextDueReading: r.nextDueReading,
    nextDueAt: iso(r.nextDueAt),
    forecastDueAt: iso(forecastDueAt),
    snoozedUntil: iso(r.snoozedUntil),
    snoozedUntilReading: r.snoozedUntilReading,
    cycle: r.cycle,
    assetRetired: r.suspended,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}
