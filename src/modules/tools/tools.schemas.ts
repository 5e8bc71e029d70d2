import { z } from 'zod';
import { clampText } from '../../core/input-guard.ts';
import { csvEnum, cursorQuery, dateTimeInput, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';

export const TOOL_STATUSES = ['GOOD', 'NEEDS_ATTENTION', 'BROKEN', 'MISSING', 'RETIRED'] as const;
export const DEFAULT_LIST_STATUSES = ['GOOD', 'NEEDS_ATTENTION', 'BROKEN', 'MISSING'] as const;
export const CHECKIN_CONDITIONS = ['GOOD', 'NEEDS_ATTENTION', 'BROKEN'] as const;
export const REPORT_KINDS = ['FAILURE_REPORT', 'REPLACEMENT_REQUEST'] as const;
export const TOOL_EVENT_KINDS = [
  'CHECK_OUT',
  'CHECK_IN',
  'ASSIGNMENT',
  'CONDITION_REPORT',
  'FAILURE_REPORT',
  'REPLACEMENT_REQUEST',
  'REPAIR_LOGGED',
  'AUDIT',
] as const;
/** Spec: minStockLevel null means this fallback threshold. */
export const LOW_STOCK_FALLBACK = 5;

const id = () => z.string().min(1).max(100).nullable().optional();
const money = () => z.number().nonnegative().max(1e12).nullable().optional();
const count = () => z.number().int().min(0).max(1_000_000_000).nullable().optional();

/** Query booleans: true/false/1/0; anything else is a 422. */
export const boolQuery = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .optional()
  .transform((v) => v === 'true' || v === '1');

// ---- requests

const toolFields = {
  category: optionalText(100),
  makeModel: optionalText(200),
  serial: optionalText(100),
  purchaseDate: dateTimeInput().nullable().optional(),
  purchaseCost: money(),
  supplier: optionalText(200),
  warrantyEndDate: dateTimeInput().nullable().optional(),
  stockLevel: count().describe('Consumables only; ignored for other tools'),
  minStockLevel: count().describe(`Low-stock threshold; null means ${LOW_STOCK_FALLBACK}`),
  notes: optionalText(2000),
  parentKitId: id().describe('The kit (another tool) this tool belongs to'),
  assignedUserId: id(),
  assignedVehicleId: id().describe('An asset of your organisation'),
  assignedYardId: id(),
  pmIntervalDays: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .nullable()
    .optional()
    .describe('Preventive maintenance every N days'),
};

export const CreateToolBody = z
  .object({ name: requiredText(200), isConsumable: z.boolean().optional(), ...toolFields })
  .describe('Tool fields; status is PATCH only; unknown fields are ignored');
export type CreateToolInput = z.output<typeof CreateToolBody>;

export const UPDATABLE_FIELDS = [
  'name',
  'category',
  'makeModel',
  'serial',
  'purchaseDate',
  'purchaseCost',
  'supplier',
  'warrantyEndDate',
  'isConsumable',
  'stockLevel',
  'minStockLevel',
  'notes',
  'parentKitId',
  'assignedUserId',
  'assignedVehicleId',
  'assignedYardId',
  'pmIntervalDays',
  'status',
] as const;

export const UpdateToolBody = z
  .object({
    name: requiredText(200).optional(),
    isConsumable: z.boolean().optional(),
    status: z.enum(TOOL_STATUSES).optional(),
    ...toolFields,
  })
  .describe('Any subset of the tool fields including status; null clears a nullable field; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdateToolInput = z.output<typeof UpdateToolBody>;

/** warrantyExpiringDays: an integer 1-365; anything else is ignored (spec), not rejected. */
const warrantyDays = z
  .string()
  .optional()
  .transform((s) => {
    const n = s !== undefined && /^\d+$/.test(s.trim()) ? Number(s) : NaN;
    return n >= 1 && n <= 365 ? n : undefined;
  })
  .describe('Warranty ends between now and now + N days (1-365; other values are ignored)');

export const ListToolsQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  status: csvEnum(TOOL_STATUSES, DEFAULT_LIST_STATUSES),
  category: z.string().max(100).optional(),
  assignedUserId: z.string().max(100).optional(),
  assignedVehicleId: z.string().max(100).optional(),
  parentKitId: z.string().max(100).optional(),
  lowStock: boolQuery.describe('Consumables with stockLevel <= COALESCE(minStockLevel, 5)'),
  pmOverdue: boolQuery.describe('pmIntervalDays > 0 and the interval has elapsed since the last service (or creation)'),
  warrantyExpiringDays: warrantyDays,
  format: z.enum(['json', 'csv']).optional().default('json').describe('csv streams every matching row as a file'),
});
export type ListToolsInput = z.output<typeof ListToolsQuery>;
export type ToolFilters = Omit<ListToolsInput, 'limit' | 'cursor' | 'format'>;

export const ToolDetailQuery = z.object({
  includeBookValue: boolQuery,
  usefulLifeYears: z.coerce
    .number()
    .optional()
    .transform((n) => (n === undefined ? undefined : Math.min(Math.max(n, 0.25), 50)))
    .describe('Years; clamped to 0.25-50; default 5 (1 for consumables)'),
});

export const CheckoutBody = z.object({
  toUserId: id().describe('Defaults to the user who issued the API key when neither toUserId nor toVehicleId is sent'),
  toVehicleId: id().describe('An asset of your organisation'),
  linkedAssetId: id(),
  note: optionalText(500),
  force: z.boolean().optional().default(false),
  includeChildren: z.boolean().optional().default(false),
});
export type CheckoutInput = z.output<typeof CheckoutBody>;

export const CheckinBody = z.object({
  condition: z
    .enum(CHECKIN_CONDITIONS, { error: () => `must be one of ${CHECKIN_CONDITIONS.join(', ')}` })
    .optional()
    .describe('Sets the tool status; omitted, the status is unchanged'),
  note: optionalText(500),
  photoAttachmentId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("An image uploaded on this tool (POST /attachments); the tool event's photoId"),
});
export type CheckinInput = z.output<typeof CheckinBody>;

export const ReportBody = z.object({
  description: optionalText(2000),
  kind: z.enum(REPORT_KINDS).optional().default('FAILURE_REPORT'),
  cost: money(),
  markMissing: z.boolean().optional().default(false),
  photoAttachmentId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("An image uploaded on this tool (POST /attachments); the tool event's photoId"),
});
export type ReportInput = z.output<typeof ReportBody>;

export const AdjustStockBody = z.object({
  delta: z
    .number({ error: (i) => (i.input === undefined ? 'is required' : 'must be a number') })
    .min(-1_000_000)
    .max(1_000_000)
    .meta({ not: { const: 0 } })
    .transform((n) => Math.trunc(n))
    .refine((n) => n !== 0, 'must be a non-zero integer')
    .describe('Non-zero; fractions are truncated toward zero; at most 1,000,000 either way'),
  note: z
    .string()
    .max(200)
    .nullable()
    .optional()
    .transform((s) => (s == null || s.trim() === '' ? null : s.trim())),
});
export type AdjustStockInput = z.output<typeof AdjustStockBody>;

export const MarkServicedBody = z
  .object({
    at: dateTimeInput().optional().describe('When the service happened; default now; not in the future'),
    note: z
      .string()
      .nullable()
      .optional()
      .transform((s) => (s == null || s.trim() === '' ? null : clampText(s.trim(), 500))),
  })
  // Optional body: nullish renders as "may be null" in OpenAPI, which marks the request body optional there.
  .nullish()
  .transform((b): { at?: Date; note?: string | null } => b ?? {});
export type MarkServicedInput = z.output<typeof MarkServicedBody>;

export const ToolEventsQuery = z.object({
  kind: z
    .string()
    .optional()
    .transform((s) => {
      const allowed = new Set<string>(TOOL_EVENT_KINDS);
      return [
        ...new Set(
          (s ?? '')
            .split(',')
            .map((k) => k.trim().toUpperCase())
            .filter((k) => allowed.has(k)),
        ),
      ] as (typeof TOOL_EVENT_KINDS)[number][];
    })
    .describe(
      `Comma-separated subset of ${TOOL_EVENT_KINDS.join(', ')}; unknown values are dropped (none left = all kinds)`,
    ),
  since: dateTimeInput().optional(),
  actorId: z.string().max(100).optional(),
  linkedAssetId: z.string().max(100).optional(),
  cursor: z.string().max(100).optional().describe('The nextCursor (an event id) of the previous page'),
  limit: limitQuery,
});
export type ToolEventsInput = z.output<typeof ToolEventsQuery>;

const clampedInt = (fallback: number, min: number, max: number) =>
  z.coerce
    .number()
    .optional()
    .transform((n) => Math.min(Math.max(Math.trunc(n ?? fallback), min), max));

export const UtilizationQuery = z.object({
  days: clampedInt(30, 1, 365).describe('Window length in days; default 30, clamped 1-365'),
  topN: clampedInt(3, 0, 10).describe('Users to list; default 3, clamped 0-10; 0 returns no users'),
});

export const QrQuery = z.object({
  fmt: z.enum(['png', 'svg']).optional().default('png'),
  size: clampedInt(600, 64, 2000).describe('Pixels; default 600, clamped 64-2000'),
});
