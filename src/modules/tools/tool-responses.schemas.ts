import { batchResponse } from '../../core/batch.ts';
import { z } from 'zod';
import type { Tool } from '../../generated/prisma/client.ts';
import { dateTime, iso } from '../../core/schemas.ts';
import { LOW_STOCK_FALLBACK, TOOL_EVENT_KINDS, TOOL_STATUSES } from './tools.schemas.ts';

/** Wire shapes of the tools API (allow-lists) and the mappers from database rows to them. */

export const ToolRow = z
  .object({
    id: z.string(),
    name: z.string(),
    category: z.string().nullable(),
    makeModel: z.string().nullable(),
    serial: z.string().nullable(),
    status: z.enum(TOOL_STATUSES),
    isConsumable: z.boolean(),
    stockLevel: z.number().int().nullable(),
    minStockLevel: z.number().int().nullable(),
    lowStock: z.boolean().describe('Consumable at or below COALESCE(minStockLevel, 5)'),
    purchaseDate: dateTime().nullable(),
    purchaseCost: z.number().nullable(),
    warrantyEndDate: dateTime().nullable(),
    parentKitId: z.string().nullable(),
    assignedUserId: z.string().nullable(),
    assignedVehicleId: z.string().nullable(),
    assignedYardId: z.string().nullable(),
    pmIntervalDays: z.number().int().nullable(),
    lastServicedAt: dateTime().nullable(),
    pmDueAt: dateTime()
      .nullable()
      .describe('COALESCE(lastServicedAt, createdAt) + pmIntervalDays; null without an interval'),
    checkedOutToUserId: z.string().nullable(),
    checkedOutVehicleId: z.string().nullable(),
    checkedOutAssetId: z.string().nullable(),
    checkedOutAt: dateTime().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'ToolRow' });

export const ToolBookValue = z
  .object({
    bookValue: z.number(),
    depreciationPct: z.number().describe('0-1 fraction of the purchase cost already depreciated'),
    usefulLifeYears: z.number(),
    elapsedYears: z.number(),
  })
  .meta({ id: 'ToolBookValue' });

export const ToolDetail = ToolRow.extend({
  scanToken: z.string(),
  supplier: z.string().nullable(),
  notes: z.string().nullable(),
  bookValue: ToolBookValue.nullable()
    .optional()
    .describe('Only with includeBookValue=true; null without purchaseDate or purchaseCost'),
}).meta({ id: 'ToolDetail' });

export const ToolEventRow = z
  .object({
    id: z.string(),
    kind: z.enum(TOOL_EVENT_KINDS),
    condition: z.string().nullable(),
    description: z.string().nullable(),
    cost: z.number().nullable(),
    linkedAssetId: z.string().nullable(),
    linkedWorkOrderId: z.string().nullable(),
    photoId: z.string().nullable(),
    holderUserId: z.string().nullable().describe('CHECK_OUT: the new holder; CHECK_IN: the returning holder'),
    holderVehicleId: z.string().nullable(),
    actor: z.object({ id: z.string(), name: z.string().nullable(), email: z.string().nullable() }).nullable(),
    createdAt: dateTime(),
  })
  .meta({ id: 'ToolEventRow' });

const ok = z.literal(true);
export const ListToolsResponse = z.object({ ok, tools: z.array(ToolRow), nextCursor: z.string().nullable() });
export const ToolCreatedResponse = z.object({ ok, toolId: z.string(), scanToken: z.string() });
export const ToolIdResponse = z.object({ ok, toolId: z.string() });
export const ToolDetailResponse = z.object({ ok, tool: ToolDetail });
export const ToolBatchResponse = batchResponse(
  'Tool',
  { toolId: z.string(), scanToken: z.string() },
  {
    formError: z.string().optional().describe('One-line summary of what is wrong with the entry'),
  },
);
export const CheckoutResponse = z.union([
  z.object({ ok, toolId: z.string(), eventId: z.string() }),
  z.object({
    ok,
    kitId: z.string(),
    succeeded: z.array(z.object({ id: z.string(), eventId: z.string() })),
    skipped: z.array(z.object({ id: z.string(), reason: z.enum(['retired', 'missing', 'already_checked_out']) })),
  }),
]);
export const CheckinResponse = z.object({
  ok,
  toolId: z.string(),
  eventId: z.string(),
  workOrderId: z.string().nullable(),
});
export const ReportResponse = z.object({ ok, toolId: z.string(), eventId: z.string(), workOrderId: z.string() });
export const AdjustStockResponse = z.object({
  ok,
  toolId: z.string(),
  eventId: z.string(),
  previousStockLevel: z.number().int(),
  newStockLevel: z.number().int(),
  crossedThreshold: z.boolean(),
});
export const MarkServicedResponse = z.object({
  ok,
  toolId: z.string(),
  eventId: z.string(),
  previousLastServicedAt: dateTime().nullable(),
  newLastServicedAt: dateTime(),
});
export const ToolEventsResponse = z.object({
  ok,
  toolId: z.string(),
  events: z.array(ToolEventRow),
  nextCursor: z.string().nullable(),
});
export const UtilizationResponse = z.object({
  ok,
  utilization: z.object({
    toolId: z.string(),
    windowStart: dateTime(),
    windowEnd: dateTime(),
    windowMs: z.number().int(),
    checkedOutMs: z.number().int(),
    checkoutCount: z.number().int(),
    openAtWindowEnd: z.boolean(),
    utilizationPct: z.number().describe('0-1 fraction of the window the tool was checked out'),
    topUsers: z.array(
      z.object({
        userId: z.string(),
        name: z.string().nullable(),
        email: z.string().nullable(),
        checkedOutMs: z.number().int(),
        checkoutCount: z.number().int(),
      }),
    ),
  }),
});

// ---- mapping

export const lowStockThreshold = (t: Pick<Tool, 'minStockLevel'>) => t.minStockLevel ?? LOW_STOCK_FALLBACK;
const DAY_MS = 86_400_000;

export function toToolRow(t: Tool): z.input<typeof ToolRow> {
  const pmBase = t.lastServicedAt ?? t.createdAt;
  return {
    id: t.id,
    name: t.name,
    category: t.category,
    makeModel: t.makeModel,
    serial: t.serial,
    status: t.status,
    isConsumable: t.isConsumable,
    stockLevel: t.stockLevel,
    minStockLevel: t.minStockLevel,
    lowStock: t.isConsumable && t.stockLevel != null && t.stockLevel <= lowStockThreshold(t),
    purchaseDate: iso(t.purchaseDate),
    purchaseCost: t.purchaseCost,
    warrantyEndDate: iso(t.warrantyEndDate),
    parentKitId: t.parentKitId,
    assignedUserId: t.assignedUserId,
    assignedVehicleId: t.assignedVehicleId,
    assignedYardId: t.assignedYardId,
    pmIntervalDays: t.pmIntervalDays,
    lastServicedAt: iso(t.lastServicedAt),
    pmDueAt: t.pmIntervalDays ? new Date(pmBase.getTime() + t.pmIntervalDays * DAY_MS).toISOString() : null,
    checkedOutToUserId: t.checkedOutToUserId,
    checkedOutVehicleId: t.checkedOutVehicleId,
    checkedOutAssetId: t.checkedOutAssetId,
    checkedOutAt: iso(t.checkedOutAt),
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

export function toToolDetail(t: Tool, bookValue?: z.input<typeof ToolBookValue> | null): z.input<typeof ToolDetail> {
  return {
    ...toToolRow(t),
    scanToken: t.scanToken,
    supplier: t.supplier,
    notes: t.notes,
    ...(bookValue !== undefined ? { bookValue } : {}),
  };
}

const YEAR_MS = 365.25 * DAY_MS;
const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/** Spec rule 7: straight line to zero over the useful life (default 5 years, 1 for consumables). */
export function toolBookValue(
  t: Pick<Tool, 'purchaseCost' | 'purchaseDate' | 'isConsumable'>,
  usefulLifeYears: number | undefined,
  now: Date,
): z.input<typeof ToolBookValue> | null {
  if (t.purchaseCost == null || !t.purchaseDate) return null;
  const life = usefulLifeYears ?? (t.isConsumable ? 1 : 5);
  const elapsedYears = Math.max(0, (now.getTime() - t.purchaseDate.getTime()) / YEAR_MS);
  const remaining = Math.max(0, 1 - elapsedYears / life);
  return {
    bookValue: round(t.purchaseCost * remaining, 2),
    depreciationPct: round(1 - remaining, 4),
    usefulLifeYears: life,
    elapsedYears: round(elapsedYears, 4),
  };
}

// What the two non-JSON answers really are on the wire (src/contracts/openapi-rules.ts publishes them).
export const TOOL_CSV_CONTENT = {
  'text/csv': {
    schema: {
      type: 'string',
      description: 'format=csv: a header row and one row per matching tool (22 columns, see docs/api/tools.md)',
    },
    example: 'id,name,category\ncm4k2x9q10000a8b7c6d5e4f3,Impact driver 18V,Power tools\n',
  },
};
export const TOOL_CSV_HEADERS = {
  'Content-Disposition': {
    description: 'With format=csv: `attachment; filename="service-tools-<YYYY-MM-DD>.csv"`',
    schema: { type: 'string', example: 'attachment; filename="service-tools-2026-03-14.csv"' },
  },
};
// The SVG example is the start and end of a real label (the path is shortened).
const QR_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="600" viewBox="0 0 37 37" shape-rendering="crispEdges">' +
  '<path fill="#ffffff" d="M0 0h37v37H0z"/><path stroke="#000000" d="M4 4.5h7m2 0h1m1 0h3m1 0h1m4 0h7"/></svg>\n';
export const TOOL_QR_CONTENT = {
  'image/png': {
    schema: { type: 'string', contentMediaType: 'image/png', description: 'fmt=png (default): a PNG image (binary)' },
    example: '(binary PNG data: a 600 x 600 px QR code of the scan link)',
  },
  'image/svg+xml': {
    schema: { type: 'string', contentMediaType: 'image/svg+xml', description: 'fmt=svg: an SVG document' },
    example: QR_SVG,
  },
};
