import { batchResponse } from '../../core/batch.ts';
import { z } from 'zod';
import type { Project } from '../../generated/prisma/client.ts';
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

export const PROJECT_STATUSES = ['ACTIVE', 'ON_HOLD', 'COMPLETED', 'ARCHIVED'] as const;
/** hourlyRate bounds (USD per hour); anything outside is a typo rather than a rate. */
export const HOURLY_RATE_MAX = 10_000;

const hourlyRate = () =>
  z
    .number()
    .min(0, 'must be between 0 and 10000')
    .max(HOURLY_RATE_MAX, 'must be between 0 and 10000')
    .nullable()
    .optional()
    .describe('USD per hour, 0-10000; null clears it (no revenue estimate)');

const projectFields = {
  code: optionalText(50).describe('Short job reference, unique in the organisation; blank is stored as null'),
  customerName: optionalText(200),
  status: z.enum(PROJECT_STATUSES).optional(),
  startDate: dateTimeInput().nullable().optional(),
  endDate: dateTimeInput().nullable().optional(),
  hourlyRate: hourlyRate(),
  notes: optionalText(5000),
};

const datesInOrder = (p: { startDate?: Date | null; endDate?: Date | null }) =>
  !(p.startDate && p.endDate && p.endDate < p.startDate);
const DATE_ORDER_ERROR = { message: 'cannot be before startDate', path: ['endDate'] };

export const CreateProjectBody = z
  .object({ name: requiredText(200), ...projectFields })
  .refine(datesInOrder, DATE_ORDER_ERROR)
  .describe('Project fields; name is required, status defaults to ACTIVE; unknown fields are ignored');
export type CreateProjectInput = z.output<typeof CreateProjectBody>;

export const UPDATABLE_PROJECT_FIELDS = [
  'name',
  'code',
  'customerName',
  'status',
  'startDate',
  'endDate',
  'hourlyRate',
  'notes',
] as const;

export const UpdateProjectBody = z
  .object({ name: requiredText(200).optional(), ...projectFields })
  .describe('Any subset of the project fields; null clears a nullable field; unknown fields are ignored')
  .meta({ minProperties: 1 });
export type UpdateProjectInput = z.output<typeof UpdateProjectBody>;

export const ListProjectsQuery = z.object({
  status: csvEnum(PROJECT_STATUSES, ['ACTIVE']).describe(
    'Comma-separated statuses, default ACTIVE; unknown values are ignored',
  ),
  limit: limitQuery,
  cursor: cursorQuery,
});

// ---- responses

export const ProjectRow = z
  .object({
    id: z.string(),
    name: z.string(),
    code: z.string().nullable(),
    customerName: z.string().nullable(),
    status: z.enum(PROJECT_STATUSES),
    startDate: dateTime().nullable(),
    endDate: dateTime().nullable(),
    hourlyRate: z.number().nullable(),
    notes: z.string().nullable(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
  })
  .meta({ id: 'ProjectRow' });

export const ListProjectsResponse = z.object({
  ok: z.literal(true),
  projects: z.array(ProjectRow),
  nextCursor: z.string().nullable(),
});
export const ProjectIdResponse = z.object({ ok: z.literal(true), projectId: z.string() });
export const ProjectDetailResponse = z.object({ ok: z.literal(true), project: ProjectRow });
export const ProjectBatchResponse = batchResponse(
  'Project',
  { projectId: z.string() },
  {
    formError: z.string().nullable().optional().describe('One sentence describing why the whole entry failed'),
  },
);

export function toProjectRow(p: Project): z.input<typeof ProjectRow> {
  return {
    id: p.id,
    name: p.name,
    code: p.code,
    customerName: p.customerName,
    status: p.status,
    startDate: iso(p.startDate),
    endDate: iso(p.endDate),
    hourlyRate: p.hourlyRate,
    notes: p.notes,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}
