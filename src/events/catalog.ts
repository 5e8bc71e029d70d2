import { z } from 'zod';
import { accessEvents } from './access-events.ts';
import { inspectionEvents } from './inspection-events.ts';
import { inventoryEvents } from './inventory-events.ts';
import { purchasingEvents } from './purchasing-events.ts';
import { telematicsEvents } from './telematics-events.ts';
import { costEvents } from './cost-events.ts';
import { importEvents } from './import-events.ts';

/**
 * Every event type the service emits, with its payload schema (the `data` of the webhook envelope).
 * emit() validates payloads against these, and the AsyncAPI document is generated from them.
 * Payloads are additive: receivers must tolerate new fields.
 */
const id = z.string();
const nullableId = z.string().nullable();
const at = z.iso.datetime({ offset: true });
const actor = z.object({ userId: nullableId, name: z.string().nullable() });
/** The reminder as it is after the change (its new cycle, for a completion). */
const serviceReminder = z.object({
  serviceReminderId: id,
  assetId: id,
  serviceTaskId: id,
  status: z.enum(['OK', 'DUE_SOON', 'OVERDUE', 'SNOOZED']),
  nextDueReading: z.number().nullable(),
  nextDueAt: at.nullable(),
  cycle: z.number().int(),
});

export const eventCatalog = {
  'flag.created': {
    summary: 'A flag is raised on an asset, by a user or by the system (AUTO_PM).',
    data: z.object({
      flagId: id,
      assetId: id,
      assetNickname: z.string(),
      severity: z.enum(['RED', 'YELLOW', 'AUTO_PM']),
      reason: z.string().nullable(),
      photoUrl: z.string().nullable(),
      raisedBy: actor,
      raisedAt: at,
      pmDueReading: z.number().nullable().optional(),
    }),
  },
  'flag.resolved': {
    summary: 'A flag is resolved, by PATCH or by closing its work order with a repair.',
    data: z.object({
      flagId: id,
      assetId: id,
      severity: z.enum(['RED', 'YELLOW', 'AUTO_PM']),
      resolutionNote: z.string().nullable(),
      resolvedBy: actor,
      resolvedAt: at,
      workOrderId: nullableId.optional(),
    }),
  },
  'hours.logged': {
    summary: 'A meter reading or state-only entry is logged.',
    data: z.object({
      logId: id,
      assetId: id,
      hoursReading: z.number(),
      delta: z.number(),
      state: z.string().nullable().optional(),
      projectId: nullableId.optional(),
      reviewStatus: z.string().optional(),
      loggedAt: at,
      autoFlagId: nullableId,
      reviewReason: z.string().nullable().optional(),
      loggedById: nullableId.optional(),
      source: z.enum(['api', 'telematics', 'inspection', 'fuel', 'import']).optional(),
      sourceId: nullableId.optional(),
    }),
  },
  'asset.created': {
    summary: 'An asset is created (single or batch).',
    data: z.object({
      assetId: id,
      nickname: z.string(),
      assetClass: z.enum(['on-road', 'off-road', 'trailer']),
      customerAssetNumber: z.string().nullable(),
      meterType: z.string(),
      lifecycleStatus: z.string(),
      actorId: nullableId,
      createdAt: at,
    }),
  },
  'asset.updated': {
    summary: 'Identity, plate, renewal, financial or lifecycle fields of an asset change.',
    data: z.object({
      assetId: id,
      nickname: z.string(),
      changedFields: z.array(z.string()),
      lifecycleStatus: z.string(),
      actorId: nullableId,
      updatedAt: at,
      // Set when the system changed the lifecycle status: why, and the inspection behind it.
      reason: z.string().optional(),
      inspectionId: id.optional(),
    }),
  },
  'workorder.created': {
    summary: 'A work order is created (by the API, a tool check-in or a tool report).',
    data: z.object({
      workOrderId: id,
      number: z.number().int(),
      title: z.string(),
      status: z.string(),
      priority: z.string(),
      assetId: nullableId,
      projectId: nullableId,
      flagId: nullableId,
      toolId: nullableId.optional(),
      assignedToId: nullableId,
      dueAt: at.nullable(),
      createdById: nullableId,
      createdAt: at,
    }),
  },
  'workorder.completed': {
    summary: 'A work order becomes DONE (by PATCH or by a repair).',
    data: z.object({
      workOrderId: id,
      number: z.number().int(),
      title: z.string(),
      assetId: nullableId,
      projectId: nullableId,
      flagId: nullableId,
      totalLaborHours: z.number(),
      totalCost: z.number(),
      completedAt: at,
      completedById: nullableId,
    }),
  },
  'tool.failure': {
    summary: 'A tool is reported BROKEN (report endpoint or BROKEN check-in).',
    data: z.object({
      toolId: id,
      name: z.string(),
      kind: z.string(),
      description: z.string().nullable(),
      newStatus: z.string(),
      workOrderId: nullableId,
      eventId: id,
      actorId: nullableId,
      at,
    }),
  },
  'tool.checked_out': {
    summary: 'A tool is checked out.',
    data: z.object({
      toolId: id,
      name: z.string(),
      toUserId: nullableId,
      toVehicleId: nullableId,
      linkedAssetId: nullableId.optional(),
      note: z.string().nullable().optional(),
      eventId: id,
      actorId: nullableId,
      at,
    }),
  },
  'tool.checked_in': {
    summary: 'A tool is checked in.',
    data: z.object({
      toolId: id,
      name: z.string(),
      condition: z.string().nullable(),
      newStatus: z.string(),
      workOrderId: nullableId.optional(),
      fromUserId: nullableId.optional(),
      eventId: id,
      actorId: nullableId,
      at,
    }),
  },
  'tool.low_stock': {
    summary: 'An adjust-stock call moves a consumable from above to at-or-below its threshold (once per crossing).',
    data: z.object({
      toolId: id,
      name: z.string(),
      previousStockLevel: z.number().int(),
      newStockLevel: z.number().int(),
      minStockLevel: z.number().int().nullable(),
      thresholdUsed: z.number().int(),
      eventId: id,
      actorId: nullableId,
      at,
    }),
  },
  'tool.assignment_changed': {
    summary:
      'A PATCH changes assignedUserId, assignedVehicleId, assignedYardId or parentKitId (one delivery per PATCH).',
    data: z.object({
      toolId: id,
      name: z.string(),
      changes: z.array(
        z.object({ type: z.enum(['user', 'vehicle', 'yard', 'kit']), from: nullableId, to: nullableId }),
      ),
      actorId: nullableId,
      at,
    }),
  },
  'tool.serviced': {
    summary: 'A tool is marked serviced.',
    data: z.object({
      toolId: id,
      name: z.string(),
      previousLastServicedAt: at.nullable(),
      newLastServicedAt: at,
      pmIntervalDays: z.number().int().nullable(),
      actorId: nullableId,
      note: z.string().nullable(),
      eventId: id,
    }),
  },
  'tool.created': {
    summary: 'A tool is created, single or batch (one delivery per row).',
    data: z.object({
      toolId: id,
      name: z.string(),
      category: z.string().nullable(),
      isConsumable: z.boolean(),
      scanToken: z.string(),
      purchaseCost: z.number().nullable().optional(),
      actorId: nullableId,
      at,
    }),
  },
  'asset.checked_out': {
    summary: 'An asset is checked out to a user and/or a project.',
    data: z.object({
      assetId: id,
      nickname: z.string(),
      toUserId: nullableId,
      toProjectId: nullableId,
      actorId: nullableId,
      expectedReturnAt: at.nullable(),
      note: z.string().nullable(),
      at,
      // Present when a checkout replaces an existing binding (same-user change or force).
      fromUserId: nullableId.optional(),
      fromProjectId: nullableId.optional(),
    }),
  },
  'asset.checked_in': {
    summary: 'A checked-out asset is checked in (not sent for no-op check-ins).',
    data: z.object({
      assetId: id,
      nickname: z.string(),
      fromUserId: nullableId,
      fromProjectId: nullableId,
      note: z.string().nullable(),
      actorId: nullableId,
      at,
      checkedOutAt: at.nullable().optional(),
    }),
  },
  'service_reminder.due_soon': {
    summary:
      'A service reminder enters DUE_SOON (by a reading, with it, or by the calendar sweep); once per reminder cycle.',
    data: serviceReminder,
  },
  'service_reminder.overdue': {
    summary:
      'A service reminder falls OVERDUE (by a reading, with it, or by the calendar sweep); once per reminder cycle.',
    data: serviceReminder,
  },
  'service_reminder.completed': {
    summary: 'A service reminder is completed (POST /service-reminders/{id}/complete or its work order DONE).',
    data: serviceReminder.extend({
      completedAt: at,
      completedReading: z.number().nullable(),
      workOrderId: nullableId,
      completedById: nullableId,
    }),
  },
  ...telematicsEvents,
  ...inspectionEvents,
  ...inventoryEvents,
  'attachment.created': {
    summary:
      'An attachment becomes READY (a multipart upload, or a presigned upload completed); contentUrl needs the ' +
      "subject's read scope.",
    data: z.object({
      attachmentId: id,
      subjectType: z.enum(['asset', 'flag', 'work_order', 'repair', 'tool']),
      subjectId: id,
      filename: z.string(),
      contentType: z.string(),
      size: z.number().int(),
      sha256: z.string(),
      caption: z.string().nullable(),
      contentUrl: z.string(),
      createdBy: actor,
      createdAt: at,
    }),
  },
  ...accessEvents,
  ...costEvents,
  ...purchasingEvents,
  ...importEvents,
} as const;

export type EventType = keyof typeof eventCatalog;
export type EventData<T extends EventType> = z.input<(typeof eventCatalog)[T]['data']>;
export const EVENT_TYPES = Object.keys(eventCatalog) as EventType[];
export const isEventType = (name: string): name is EventType => Object.hasOwn(eventCatalog, name);
