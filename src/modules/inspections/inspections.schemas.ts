import { z } from 'zod';
import type { Inspection } from '../../generated/prisma/client.ts';
import {
  csvEnum,
  cursorQuery,
  dateTime,
  dateTimeInput,
  iso,
  limitQuery,
  optionalText,
  requiredText,
  ErrorResponse,
} from '../../core/schemas.ts';
import { FORM_ITEMS_MAX, InspectionItem } from './inspection-forms.schemas.ts';

export const INSPECTION_RESULTS = ['PASS', 'FAIL'] as const;
export const REVIEW_OUTCOMES = ['defects_corrected', 'no_correction_needed'] as const;
export const ATTACHMENTS_PER_RESULT_MAX = 20;
export const ATTACHMENTS_PER_INSPECTION_MAX = 200;

// ---- requests

export const InspectionResultInput = z
  .object({
    itemKey: z.string().min(1).max(64),
    pass: z.boolean().nullable().optional().describe('The answer of a pass_fail item'),
    value: z
      .union([z.number(), z.string().max(2000), z.boolean()])
      .nullable()
      .optional()
      .describe('The answer of a number, text or meter item'),
    note: optionalText(1000),
    attachmentIds: z
      .array(z.string().min(1).max(100))
      .max(ATTACHMENTS_PER_RESULT_MAX)
      .optional()
      .describe('READY attachments of the same asset (subjectType asset); the answer of a photo item'),
  })
  .meta({ id: 'InspectionAnswer' });
export type InspectionResultInput = z.output<typeof InspectionResultInput>;

export const CreateInspectionBody = z.object({
  inspectionFormId: z.string().min(1).max(100),
  version: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe('The form version the inspector answered (an app that worked offline); default the current one'),
  assetId: z.string().min(1).max(100),
  inspectedAt: dateTimeInput()
    .optional()
    .describe('Default now; at most 5 minutes ahead of the server clock, not before the asset was added'),
  inspectorName: optionalText(200),
  results: z
    .array(InspectionResultInput)
    .max(FORM_ITEMS_MAX)
    .refine(
      (results) => results.reduce((n, r) => n + (r.attachmentIds?.length ?? 0), 0) <= ATTACHMENTS_PER_INSPECTION_MAX,
      `name at most ${ATTACHMENTS_PER_INSPECTION_MAX} attachments in all`,
    )
    .describe(
      `One answer per item (at most ${FORM_ITEMS_MAX}), with at most ${ATTACHMENTS_PER_RESULT_MAX} attachments each and ${ATTACHMENTS_PER_INSPECTION_MAX} in all`,
    ),
  signature: z
    .object({ name: requiredText(200), signedAt: dateTimeInput() })
    .nullable()
    .optional()
    .describe("The inspector's signature"),
});
export type CreateInspectionInput = z.output<typeof CreateInspectionBody>;

export const ReviewInspectionBody = z.object({
  outcome: z
    .enum(REVIEW_OUTCOMES)
    .describe('defects_corrected (every flag of the inspection resolved) or no_correction_needed'),
  note: optionalText(2000),
  reviewedBy: optionalText(200).describe("The certifying mechanic's name; reviewedById records the key's user"),
});
export type ReviewInspectionInput = z.output<typeof ReviewInspectionBody>;

export const ListInspectionsQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  assetId: z.string().min(1).max(100).optional(),
  inspectionFormId: z.string().min(1).max(100).optional(),
  result: csvEnum(INSPECTION_RESULTS, INSPECTION_RESULTS).describe('PASS, FAIL or both (default)'),
  since: dateTimeInput().optional().describe('Only inspections with inspectedAt at or after this time'),
});
export type ListInspectionsInput = z.output<typeof ListInspectionsQuery>;

export const InspectionSummaryQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  since: dateTimeInput()
    .optional()
    .describe('notInspected is true for assets with no inspection at or after it; default 24 hours ago'),
});
export type InspectionSummaryInput = z.output<typeof InspectionSummaryQuery>;

// ---- responses

const Review = z
  .object({
    outcome: z.enum(REVIEW_OUTCOMES),
    note: z.string().nullable(),
    reviewedBy: z.string().nullable(),
    reviewedById: z.string().nullable(),
    reviewedAt: dateTime(),
  })
  .meta({ id: 'InspectionReview' });

export const InspectionRow = z
  .object({
    id: z.string(),
    assetId: z.string(),
    inspectionFormId: z.string(),
    version: z.number().int().describe('The form version answered'),
    inspectedAt: dateTime(),
    inspectorName: z.string().nullable(),
    result: z.enum(INSPECTION_RESULTS),
    failedItems: z.array(z.string()).describe('Keys of the failed items'),
    logId: z.string().nullable().describe("The meter item's reading"),
    outOfService: z.boolean().describe('This inspection took the asset out of service'),
    returnedToServiceAt: dateTime().nullable(),
    signature: z.object({ name: z.string(), signedAt: dateTime() }).nullable(),
    review: Review.nullable(),
    createdAt: dateTime(),
  })
  .meta({ id: 'InspectionRow' });

export const InspectionResultRow = z
  .object({
    itemKey: z.string(),
    pass: z.boolean().nullable(),
    value: z.union([z.number(), z.string(), z.boolean()]).nullable(),
    note: z.string().nullable(),
    failed: z.boolean(),
    attachmentIds: z.array(z.string()),
  })
  .meta({ id: 'InspectionResult' });

export const InspectionFlagRow = z
  .object({
    id: z.string(),
    itemKey: z.string(),
    severity: z.enum(['RED', 'YELLOW', 'AUTO_PM']),
    status: z.enum(['OPEN', 'IN_PROGRESS', 'RESOLVED']),
    note: z.string().nullable(),
    opened: z.boolean().describe('This inspection opened the flag (false: it added to a flag already open)'),
    attachmentIds: z.array(z.string()).describe("The failed item's attachments in this inspection"),
  })
  .meta({ id: 'InspectionFlag' });

export const InspectionAttachmentRow = z
  .object({
    id: z.string(),
    itemKey: z.string(),
    filename: z.string(),
    contentType: z.string(),
    size: z.number().int(),
    contentUrl: z.string().describe('GET it with the asset read scope'),
  })
  .meta({ id: 'InspectionAttachment' });

export const InspectionDetail = InspectionRow.extend({
  formName: z.string(),
  items: z.array(InspectionItem).describe('The items of the form version answered'),
  results: z.array(InspectionResultRow),
  flags: z.array(InspectionFlagRow),
  attachments: z.array(InspectionAttachmentRow),
}).meta({ id: 'InspectionDetail' });

export const CreateInspectionResponse = z.object({
  ok: z.literal(true),
  inspectionId: z.string(),
  result: z.enum(INSPECTION_RESULTS),
  flagIds: z.array(z.string()).describe('Flags opened or added to, one per failed item'),
  logId: z.string().nullable(),
  outOfService: z.boolean().describe('The submission took the asset out of service'),
});
export const ListInspectionsResponse = z.object({
  ok: z.literal(true),
  inspections: z.array(InspectionRow),
  nextCursor: z.string().nullable(),
});
export const InspectionDetailResponse = z.object({ ok: z.literal(true), inspection: InspectionDetail });
export const ReviewConflictResponse = ErrorResponse.extend({
  openFlagIds: z.array(z.string()).optional().describe('inspection_defects_open: the flags still open'),
});
export const ReviewInspectionResponse = z.object({
  ok: z.literal(true),
  inspectionId: z.string(),
  review: Review,
  returnedToService: z.boolean().describe('The review put the asset back IN_SERVICE'),
});

export const InspectionSummaryRow = z
  .object({
    assetId: z.string(),
    nickname: z.string(),
    lifecycleStatus: z.enum(['IN_SERVICE', 'OUT_OF_SERVICE', 'ARCHIVED', 'SOLD']),
    lastInspectionId: z.string().nullable(),
    lastInspectedAt: dateTime().nullable(),
    lastResult: z.enum(INSPECTION_RESULTS).nullable(),
    openDefects: z.number().int().describe('Open flags opened by inspections'),
    notInspected: z.boolean().describe('No inspection at or after `since`'),
  })
  .meta({ id: 'InspectionSummaryRow' });
export const InspectionSummaryResponse = z.object({
  ok: z.literal(true),
  since: dateTime(),
  assets: z.array(InspectionSummaryRow),
  nextCursor: z.string().nullable(),
});

export function toInspectionRow(i: Inspection): z.input<typeof InspectionRow> {
  return {
    id: i.id,
    assetId: i.assetId,
    inspectionFormId: i.formId,
    version: i.formVersion,
    inspectedAt: i.inspectedAt.toISOString(),
    inspectorName: i.inspectorName,
    result: i.result,
    failedItems: i.failedItems,
    logId: i.logId,
    outOfService: i.outOfServiceAt !== null,
    returnedToServiceAt: iso(i.returnedToServiceAt),
    signature: i.signatureName && i.signedAt ? { name: i.signatureName, signedAt: i.signedAt.toISOString() } : null,
    review:
      i.reviewOutcome && i.reviewedAt
        ? {
            outcome: i.reviewOutcome,
            note: i.reviewNote,
            reviewedBy: i.reviewedBy,
            reviewedById: i.reviewedById,
            reviewedAt: i.reviewedAt.toISOString(),
          }
        : null,
    createdAt: i.createdAt.toISOString(),
  };
}
