import { z } from 'zod';
import type { Import } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, ErrorResponse, iso, limitQuery, requiredText } from '../../core/schemas.ts';
import { isTimeZone } from './import-values.rules.ts';

export const IMPORT_TYPES = [
  'assets',
  'meter_readings',
  'fuel_entries',
  'parts',
  'stock_counts',
  'tools',
  'vendors',
] as const;
export type ImportType = (typeof IMPORT_TYPES)[number];
export const IMPORT_STATUSES = [
  'validating',
  'validated',
  'committing',
  'completed',
  'partially_completed',
  'failed',
  'rolled_back',
] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
export const ROW_ACTIONS = ['create', 'update', 'unchanged', 'error'] as const;
export type RowAction = (typeof ROW_ACTIONS)[number];
export const ASSET_MATCHES = ['vin', 'serial', 'customerAssetNumber', 'nickname'] as const;
export type AssetMatch = (typeof ASSET_MATCHES)[number];

export const ImportOptions = z
  .object({
    delimiter: z.enum([',', ';', '\t', '|']).optional().describe('Default: detected from the header line'),
    decimal: z.enum(['.', ',']).optional().describe('The decimal mark of numbers (default ".")'),
    dateFormat: z
      .enum(['iso', 'dd/mm/yyyy', 'mm/dd/yyyy', 'yyyy-mm-dd hh:mm'])
      .optional()
      .describe('How dates are written (default iso)'),
    timezone: z
      .string()
      .max(64)
      .refine(isTimeZone, 'must be an IANA time zone, e.g. Europe/Paris')
      .optional()
      .describe('IANA zone of dates written without an offset (default UTC)'),
    match: z
      .enum(ASSET_MATCHES)
      .optional()
      .describe('The asset column rows are matched by (default customerAssetNumber)'),
    onError: z
      .enum(['reject_all', 'skip_rows'])
      .optional()
      .describe('reject_all (default): any error row refuses the commit; skip_rows: the good rows commit'),
    fuelProducts: z
      .array(z.string().min(1).max(100))
      .max(100)
      .optional()
      .describe('fuel_entries: the product values that are fuel; other rows are unchanged (not_fuel)'),
    clearValue: z
      .string()
      .trim()
      .min(1)
      .max(50)
      .optional()
      .describe(
        'A cell whose whole text is this (any case, e.g. "#clear") clears the field: null, or no fuel cards. ' +
          'Refused (not_clearable) on a field that always has a value. Empty cells never clear',
      ),
  })
  .strict()
  .meta({ id: 'ImportOptions' });
export type ImportOptionsInput = z.output<typeof ImportOptions>;

export const ImportMapping = z
  .record(z.string().max(200), z.string().max(100).nullable())
  .refine((m) => Object.keys(m).length <= 200, 'at most 200 columns')
  .describe('Column header → field name; null ignores the column. Unmapped headers named like a field feed it')
  .meta({ id: 'ImportMapping' });

const importType = z.enum(IMPORT_TYPES);

export const CreateImportBody = z
  .object({
    type: importType,
    uploadAttachmentId: z.string().min(1).max(100).describe('A READY attachment holding the UTF-8 CSV file'),
    mappingId: z.string().min(1).max(100).optional().describe('A saved mapping (POST /imports/mappings)'),
    mapping: ImportMapping.optional(),
    options: ImportOptions.optional().describe("Overrides the saved mapping's options"),
  })
  .meta({ id: 'ImportCreate' });
export type CreateImportInput = z.output<typeof CreateImportBody>;

/** The multipart variant's text fields (before the file part); mapping and options are JSON text. */
export const MultipartImportFields = z.object({
  type: importType,
  mappingId: z.string().min(1).max(100).optional(),
  mapping: z
    .string()
    .max(64 * 1024)
    .optional(),
  options: z
    .string()
    .max(64 * 1024)
    .optional(),
});

export const ImportListQuery = z.object({ limit: limitQuery, cursor: cursorQuery });
export const ImportErrorsQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  format: z.enum(['json', 'csv']).optional().describe('csv: the rejected rows as they came, with an error column'),
});

// ---- responses

export const ImportAccepted = z.object({ ok: z.literal(true), importId: z.string() });

const Counts = z
  .object({
    rows: z.number().int(),
    create: z.number().int(),
    update: z.number().int(),
    unchanged: z.number().int(),
    error: z.number().int(),
  })
  .meta({ id: 'ImportCounts' });
export type ImportCounts = z.output<typeof Counts>;
export const EMPTY_COUNTS: ImportCounts = { rows: 0, create: 0, update: 0, unchanged: 0, error: 0 };

export const ImportDetail = z
  .object({
    id: z.string(),
    type: importType,
    status: z.enum(IMPORT_STATUSES),
    progress: z.object({
      rowsDone: z.number().int().describe('Rows validated (validating) or written (committing)'),
      rowsTotal: z.number().int(),
    }),
    counts: Counts,
    failureReason: z.string().nullable().describe('Why the import failed (status failed)'),
    mappingId: z.string().nullable(),
    mapping: z.record(z.string(), z.string().nullable()),
    options: z.record(z.string(), z.unknown()),
    delimiter: z.string().nullable(),
    createdAt: dateTime(),
    validatedAt: dateTime().nullable(),
    committedAt: dateTime().nullable().describe('When the commit was asked for'),
    completedAt: dateTime().nullable(),
    rolledBackAt: dateTime().nullable(),
  })
  .meta({ id: 'Import' });
export const ImportResponse = z.object({ ok: z.literal(true), import: ImportDetail });
export const ImportListResponse = z.object({
  ok: z.literal(true),
  imports: z.array(ImportDetail),
  nextCursor: z.string().nullable(),
});

export const ImportError = z
  .object({
    row: z.number().int().describe('The line of the file the row starts on (the header is line 1)'),
    column: z.string().nullable().describe('The column header, when one column is at fault'),
    value: z.string().nullable(),
    code: z.string(),
    message: z.string(),
  })
  .meta({ id: 'ImportError' });
export const ImportErrorsResponse = z.object({
  ok: z.literal(true),
  errors: z.array(ImportError),
  nextCursor: z.string().nullable(),
});

export const ImportRowView = z
  .object({
    row: z.number().int(),
    action: z.enum([...ROW_ACTIONS, 'pending']).describe('pending while validating'),
    targetId: z.string().nullable().describe('The record the row updates or refers to (matched id)'),
    resultId: z.string().nullable().describe('What the commit wrote: the created record, or the updated one'),
    errorCode: z.string().nullable(),
    values: z.record(z.string(), z.unknown()).nullable().describe('The row as read into fields'),
  })
  .meta({ id: 'ImportRow' });
export const ImportRowsResponse = z.object({
  ok: z.literal(true),
  rows: z.array(ImportRowView),
  nextCursor: z.string().nullable(),
});

export const CreateMappingBody = z
  .object({
    name: requiredText(200),
    type: importType,
    mapping: ImportMapping,
    options: ImportOptions.optional(),
  })
  .meta({ id: 'ImportMappingCreate' });
export const MappingCreatedResponse = z.object({ ok: z.literal(true), mappingId: z.string() });
export const SavedMapping = z
  .object({
    id: z.string(),
    name: z.string(),
    type: importType,
    mapping: z.record(z.string(), z.string().nullable()),
    options: z.record(z.string(), z.unknown()),
    createdAt: dateTime(),
  })
  .meta({ id: 'SavedImportMapping' });
export const MappingListQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  type: importType.optional(),
});
export const MappingListResponse = z.object({
  ok: z.literal(true),
  mappings: z.array(SavedMapping),
  nextCursor: z.string().nullable(),
});

export const IMPORT_ERRORS = {
  403: ErrorResponse.describe("missing_scope: imports:write, or the imported type's write scope"),
  404: ErrorResponse.describe('The import, mapping or attachment is not in this organisation'),
};

// ---- mapping

export function toImportDetail(i: Import): z.input<typeof ImportDetail> {
  return {
    id: i.id,
    type: i.type as ImportType,
    status: i.status as ImportStatus,
    progress: { rowsDone: i.rowsDone, rowsTotal: i.rowsTotal },
    counts: { ...EMPTY_COUNTS, ...(i.counts as Partial<ImportCounts>) },
    failureReason: i.failureReason,
    mappingId: i.mappingId,
    mapping: i.mapping as Record<string, string | null>,
    options: i.options as Record<string, unknown>,
    delimiter: i.delimiter,
    createdAt: i.createdAt.toISOString(),
    validatedAt: iso(i.validatedAt),
    committedAt: iso(i.committedAt),
    completedAt: iso(i.completedAt),
    rolledBackAt: iso(i.rolledBackAt),
  };
}
