import { z } from 'zod';
import type { InspectionForm } from '../../generated/prisma/client.ts';
import { csvEnum, cursorQuery, dateTime, iso, limitQuery, optionalText, requiredText } from '../../core/schemas.ts';

export const ITEM_TYPES = ['pass_fail', 'number', 'text', 'meter', 'photo'] as const;
export const ASSET_CLASSES = ['on-road', 'off-road', 'trailer'] as const;
export const FORM_STATUSES = ['ACTIVE', 'ARCHIVED'] as const;
export const FORM_ITEMS_MAX = 200;
export const ITEM_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

// ---- items

export const InspectionItemInput = z
  .object({
    key: z
      .string()
      .trim()
      .min(1, 'cannot be blank')
      .max(64)
      .regex(ITEM_KEY_PATTERN, 'use letters, digits, "_", "." and "-", starting with a letter or digit')
      .describe('Unique within the form; results name the item by it'),
    label: requiredText(200),
    type: z.enum(ITEM_TYPES).describe('pass_fail (answered with pass), number, text, meter (value), photo'),
    required: z.boolean().optional().describe('Default true: a submission must answer it'),
    critical: z
      .boolean()
      .optional()
      .describe('Default false: a failure opens a RED flag (else YELLOW) and may take the asset out of service'),
    photoRequiredOnFail: z.boolean().optional().describe('Default false: a failed answer must name an attachment'),
    min: z.number().nullable().optional().describe('number items: a value below it fails the item'),
    max: z.number().nullable().optional().describe('number items: a value above it fails the item'),
  })
  .meta({ id: 'InspectionItemCreate' });

export const InspectionItem = z
  .object({
    key: z.string(),
    label: z.string(),
    type: z.enum(ITEM_TYPES),
    required: z.boolean(),
    critical: z.boolean(),
    photoRequiredOnFail: z.boolean(),
    min: z.number().nullable(),
    max: z.number().nullable(),
  })
  .meta({ id: 'InspectionItem' });
export type InspectionItem = z.output<typeof InspectionItem>;

/** Item rules across the list: unique keys, bounds on number items only and in order, one meter item at most. */
function checkItems(items: z.output<typeof InspectionItemInput>[], ctx: z.RefinementCtx) {
  const seen = new Set<string>();
  let meters = 0;
  items.forEach((item, i) => {
    const at = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: ['items', i, field], message });
    if (seen.has(item.key)) at('key', `"${item.key}" is used by another item of this form`);
    seen.add(item.key);
    if (item.type !== 'number' && (item.min != null || item.max != null))
      at(item.min != null ? 'min' : 'max', 'only number items take min and max');
    if (item.min != null && item.max != null && item.min > item.max) at('min', 'must not be greater than max');
    if (item.type === 'meter' && ++meters > 1)
      at('type', 'a form has at most one meter item: a submission records one reading');
  });
}

export const normaliseItem = (item: z.output<typeof InspectionItemInput>): InspectionItem => ({
  key: item.key,
  label: item.label,
  type: item.type,
  required: item.required ?? true,
  critical: item.critical ?? false,
  photoRequiredOnFail: item.photoRequiredOnFail ?? false,
  min: item.min ?? null,
  max: item.max ?? null,
});

const items = z
  .array(InspectionItemInput)
  .min(1, 'a form needs at least one item')
  .max(FORM_ITEMS_MAX, `a form has at most ${FORM_ITEMS_MAX} items`);

const formFields = {
  name: requiredText(200).optional(),
  description: optionalText(2000),
  assetClasses: z
    .array(z.enum(ASSET_CLASSES))
    .max(3)
    .nullable()
    .optional()
    .describe('Asset classes the form applies to; empty or null: every class'),
  outOfServiceOnCriticalFailure: z
    .boolean()
    .optional()
    .describe('Default true: a failed critical item sets an IN_SERVICE asset OUT_OF_SERVICE'),
};

// ---- requests

export const CreateInspectionFormBody = z
  .object({
    template: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Copy a built-in template (GET /inspection-form-templates); other fields override its own'),
    ...formFields,
    items: items.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.template !== undefined) {
      if (body.items !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['items'],
          message: 'comes from the template; PATCH the form to change it',
        });
      return;
    }
    if (body.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'is required' });
    if (body.items === undefined) ctx.addIssue({ code: 'custom', path: ['items'], message: 'is required' });
    else checkItems(body.items, ctx);
  })
  .describe('A form with its items, or {template} to copy a built-in one');
export type CreateInspectionFormInput = z.output<typeof CreateInspectionFormBody>;

export const UpdateInspectionFormBody = z
  .object({ ...formFields, items: items.optional().describe('Changed items make the next version') })
  .superRefine((body, ctx) => {
    if (body.items) checkItems(body.items, ctx);
  })
  .describe('Any subset of the form fields; items that differ from the current version create the next version')
  .meta({ minProperties: 1 });
export type UpdateInspectionFormInput = z.output<typeof UpdateInspectionFormBody>;

export const ListInspectionFormsQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  status: csvEnum(FORM_STATUSES, ['ACTIVE']).describe('Comma-separated subset of ACTIVE, ARCHIVED; default ACTIVE'),
});
export type ListInspectionFormsInput = z.output<typeof ListInspectionFormsQuery>;

export const GetInspectionFormQuery = z.object({
  version: z.coerce.number().int().min(1).max(1_000_000).optional().describe('An earlier version; default current'),
});

// ---- responses

export const InspectionFormRow = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    assetClasses: z.array(z.enum(ASSET_CLASSES)).describe('Empty: every class'),
    outOfServiceOnCriticalFailure: z.boolean(),
    template: z.string().nullable().describe('The built-in template it was copied from'),
    version: z.number().int().describe('The current version (or the one asked for)'),
    currentVersion: z.number().int(),
    status: z.enum(FORM_STATUSES),
    archivedAt: dateTime().nullable(),
    items: z.array(InspectionItem),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'InspectionForm' });

export const InspectionTemplateRow = z
  .object({
    id: z.string().describe('Send it as `template` to POST /inspection-forms'),
    key: z.string().describe('Same as id'),
    name: z.string(),
    description: z.string(),
    assetClasses: z.array(z.enum(ASSET_CLASSES)),
    outOfServiceOnCriticalFailure: z.boolean(),
    items: z.array(InspectionItem),
  })
  .meta({ id: 'InspectionFormTemplate' });

export const ListInspectionTemplatesResponse = z.object({
  ok: z.literal(true),
  templates: z.array(InspectionTemplateRow),
});
export const ListInspectionFormsResponse = z.object({
  ok: z.literal(true),
  inspectionForms: z.array(InspectionFormRow),
  nextCursor: z.string().nullable(),
});
export const InspectionFormDetailResponse = z.object({ ok: z.literal(true), inspectionForm: InspectionFormRow });
export const InspectionFormVersionResponse = z.object({
  ok: z.literal(true),
  inspectionFormId: z.string(),
  version: z.number().int(),
});
export const ArchiveInspectionFormResponse = z.object({
  ok: z.literal(true),
  inspectionFormId: z.string(),
  status: z.enum(FORM_STATUSES),
  archivedAt: dateTime(),
});

export function toInspectionFormRow(
  f: InspectionForm,
  version: { version: number; items: unknown },
): z.input<typeof InspectionFormRow> {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    assetClasses: f.assetClasses as (typeof ASSET_CLASSES)[number][],
    outOfServiceOnCriticalFailure: f.outOfServiceOnCriticalFailure,
    template: f.template,
    version: version.version,
    currentVersion: f.currentVersion,
    status: f.status,
    archivedAt: iso(f.archivedAt),
    items: version.items as InspectionItem[],
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}
