import { z } from 'zod';
import type { Attachment } from '../../generated/prisma/client.ts';
import { cursorQuery, dateTime, limitQuery, optionalText } from '../../core/schemas.ts';
import { textProblem } from '../../core/input-guard.ts';
import { SUBJECT_TYPES } from './attachment-types.rules.ts';

export const SubjectTypeSchema = z.enum(SUBJECT_TYPES).describe('What the file is attached to');
const SHA_EXAMPLE = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const sha256 = () =>
  z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits')
    .meta({ example: SHA_EXAMPLE });

/**
 * The text fields of the multipart upload; they must come before the `file` part. The API's input guard reads
 * JSON bodies, params and queries, not multipart fields: text no database column can store is refused here.
 */
export const MultipartFields = z
  .object({
    subjectType: SubjectTypeSchema,
    subjectId: z.string().min(1).max(200),
    caption: optionalText(1000),
  })
  .superRefine((fields, check) => {
    for (const [name, value] of Object.entries(fields)) {
      const problem = typeof value === 'string' ? textProblem(value) : null;
      if (problem) check.addIssue({ code: 'custom', path: [name], message: problem });
    }
  });
export type MultipartFieldsInput = z.output<typeof MultipartFields>;

export const CreateUploadBody = z
  .object({
    subjectType: SubjectTypeSchema,
    subjectId: z.string().min(1).max(200),
    filename: z.string().min(1).max(1000).describe('The original name; kept for display and downloads only'),
    contentType: z
      .string()
      .min(1)
      .max(200)
      .describe('What the client believes the file is; the stored type is detected from the bytes on complete'),
    size: z.number().int().min(1).describe('Exact size in bytes; the upload URL accepts exactly this many'),
    sha256: sha256().optional().describe('Lowercase hex SHA-256 of the file, verified on complete'),
    caption: optionalText(1000),
  })
  .describe('A presigned upload: the bytes go to upload.url, then POST /attachments/{id}/complete');
export type CreateUploadInput = z.output<typeof CreateUploadBody>;

export const ListAttachmentsQuery = z.object({
  subjectType: SubjectTypeSchema,
  subjectId: z.string().min(1).max(200),
  limit: limitQuery,
  cursor: cursorQuery,
});
export type ListAttachmentsInput = z.output<typeof ListAttachmentsQuery>;

export const UpdateAttachmentBody = z
  .object({ caption: z.string().max(1000).nullable().describe('null clears it') })
  .describe('The caption is the only field that changes; the file never does');

export const ContentQuery = z.object({
  disposition: z
    .enum(['attachment', 'inline'])
    .default('attachment')
    .describe('inline is honoured for images and PDF only; everything else is always a download'),
});

export const UploadTokenParams = z.object({ token: z.string().min(1).max(1024) });

// ---- responses

export const AttachmentRow = z
  .object({
    attachmentId: z.string(),
    subjectType: SubjectTypeSchema,
    subjectId: z.string(),
    filename: z.string(),
    contentType: z.string().describe('Detected from the bytes (the declared type while PENDING)'),
    size: z.number().int().describe('Bytes (the declared size while PENDING)'),
    sha256: z.string().nullable().describe('Lowercase hex; null until the bytes are stored'),
    caption: z.string().nullable(),
    status: z.enum(['PENDING', 'READY']),
    createdAt: dateTime(),
    createdBy: z.string().nullable().describe('Id of the user who issued the uploading key'),
    contentUrl: z.string().describe('GET it with a key holding the subject’s read scope'),
  })
  .meta({ id: 'Attachment' });

export const UploadedResponse = z.object({
  ok: z.literal(true),
  attachmentId: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  contentType: z.string(),
});
export const CreateUploadResponse = z.object({
  ok: z.literal(true),
  attachmentId: z.string(),
  upload: z.object({
    method: z.literal('PUT'),
    url: z.string().describe('Send the bytes here, with exactly these headers and no API key'),
    headers: z.record(z.string(), z.string()),
    expiresAt: dateTime(),
  }),
});
export const AttachmentResponse = z
  .object({ ok: z.literal(true), attachment: AttachmentRow })
  .meta({ id: 'AttachmentResponse' });
export const ListAttachmentsResponse = z.object({
  ok: z.literal(true),
  attachments: z.array(AttachmentRow),
  nextCursor: z.string().nullable(),
});
export const DeleteAttachmentResponse = z.object({ ok: z.literal(true), attachmentId: z.string() });

export const contentUrlOf = (baseUrl: string, id: string) => `${baseUrl}/api/v1/attachments/${id}/content`;

export function toAttachmentRow(a: Attachment, baseUrl: string): z.input<typeof AttachmentRow> {
  return {
    attachmentId: a.id,
    subjectType: a.subjectType as z.input<typeof SubjectTypeSchema>,
    subjectId: a.subjectId,
    filename: a.filename,
    contentType: a.contentType,
    size: a.size,
    sha256: a.sha256,
    caption: a.caption,
    status: a.status,
    createdAt: a.createdAt.toISOString(),
    createdBy: a.createdById,
    contentUrl: contentUrlOf(baseUrl, a.id),
  };
}
