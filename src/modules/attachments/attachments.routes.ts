import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { abandonUnreadBody, readingBody } from '../../http/upload-body.ts';
import { contextOf } from '../../core/context.ts';
import { ApiError, ValidationError } from '../../core/errors.ts';
import { IdParams } from '../../core/schemas.ts';
import {
  ATTACHMENT_MULTIPART_BODY,
  COMPLETE_ERRORS,
  CREATE_UPLOAD_ERRORS,
  DELETE_ERRORS,
  READ_ERRORS,
  UPLOAD_ERRORS,
  WRITE_ERRORS,
} from './attachment-media.schemas.ts';
import {
  AttachmentResponse,
  CreateUploadBody,
  CreateUploadResponse,
  DeleteAttachmentResponse,
  ListAttachmentsQuery,
  ListAttachmentsResponse,
  MultipartFields,
  UpdateAttachmentBody,
  UploadedResponse,
} from './attachments.schemas.ts';
import { SUBJECT_SCOPES } from './attachments.service.ts';

/** A multipart body the parser cannot read (cut short, a bad boundary, too many parts) is the client's error. */
function malformed(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const status = (err as { statusCode?: number }).statusCode;
  if (status === 413) return new ApiError(413, 'file_too_large', (err as Error).message);
  return new ApiError(400, 'upload_interrupted', `The multipart body could not be read: ${(err as Error).message}`);
}

/**
 * The values of the multipart fields that came before the file. The parser keeps parts in arrival order, and may
 * already hold fields that follow the file when the body is small: those are left out, so the rule does not depend
 * on how the body was split into packets.
 */
function fieldValues(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(fields)) {
    const list = (Array.isArray(field) ? field : [field]) as { type?: string; value?: unknown }[];
    if (list.some((f) => f?.type === 'file')) break;
    const f = list[0];
    if (f && typeof f === 'object' && f.type === 'field') out[name] = f.value;
  }
  return out;
}

export const attachmentRoutes =
  ({ services, config }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const attachments = services.attachments;
    const tags = ['attachments'];
    // Scope follows the subject, known once the body or the row is read: the service checks it (assertScope), the
    // contract names the scope of each subject type.
    const reading = { scope: null, subjectScopes: SUBJECT_SCOPES.read };
    const writing = { scope: null, subjectScopes: SUBJECT_SCOPES.write };

    // The multipart parser is registered in this child context only: every other route stays JSON-only.
    await app.register(async (upload) => {
      upload.addHook('onSend', abandonUnreadBody);
      await upload.register(multipart, {
        limits: { fileSize: config.attachments.maxBytes + 1, files: 1, fields: 10, fieldSize: 4096, parts: 12 },
        // Larger chunks than busboy's 16 KiB: fewer hash, sniff and write calls per file, a bounded buffer each.
        fileHwm: 256 * 1024,
      } as never);
      upload.post(
        '/attachments',
        {
          config: { ...writing, idempotency: 'own' },
          schema: {
            operationId: 'uploadAttachment',
            tags,
            summary: 'Upload a file (multipart/form-data: subjectType, subjectId, caption?, then file)',
            response: { 201: UploadedResponse, ...UPLOAD_ERRORS },
            'x-request-content': ATTACHMENT_MULTIPART_BODY,
          },
        },
        async (req, reply) => {
          if (!req.isMultipart())
            throw new ValidationError({ body: 'must be multipart/form-data' }, 'Send the file as multipart/form-data');
          const file = await req.file().catch((err: unknown) => {
            throw malformed(err);
          });
          if (!file) throw new ValidationError({ file: 'is required' }, 'No file part');
          const values = fieldValues(file.fields as Record<string, unknown>);
          const parsed = MultipartFields.safeParse(values);
          if (!parsed.success) {
            const fieldErrors: Record<string, string> = {};
            for (const issue of parsed.error.issues) {
              const name = String(issue.path[0]);
              fieldErrors[name] = name in values ? issue.message : 'is required, as a form field before the file part';
            }
            throw new ValidationError(fieldErrors);
          }
          return readingBody(reply, file.file, async () => {
            const result = await attachments.upload(contextOf(req), parsed.data, {
              filename: file.filename,
              declaredType: file.mimetype,
              stream: file.file,
            });
            return reply.code(201).send(result);
          });
        },
      );
    });

    app.post(
      '/attachments/uploads',
      {
        config: writing,
        schema: {
          operationId: 'createAttachmentUpload',
          tags,
          summary: 'Start a presigned upload: PUT the bytes to upload.url, then POST /attachments/{id}/complete',
          body: CreateUploadBody,
          response: { 201: CreateUploadResponse, ...CREATE_UPLOAD_ERRORS },
        },
      },
      async (req, reply) => reply.code(201).send(await attachments.createUpload(contextOf(req), req.body)),
    );

    app.post(
      '/attachments/:id/complete',
      {
        config: writing,
        schema: {
          operationId: 'completeAttachmentUpload',
          tags,
          summary: 'Finish a presigned upload once its size, type and checksum are verified',
          params: IdParams,
          response: { 200: AttachmentResponse, ...COMPLETE_ERRORS },
        },
      },
      (req) => attachments.complete(contextOf(req), req.params.id),
    );

    app.get(
      '/attachments',
      {
        config: reading,
        schema: {
          operationId: 'listAttachments',
          tags,
          summary: 'Attachments of one record, newest first',
          querystring: ListAttachmentsQuery,
          response: { 200: ListAttachmentsResponse, ...READ_ERRORS, 404: UPLOAD_ERRORS[404] },
        },
      },
      (req) => attachments.list(contextOf(req), req.query),
    );

    app.get(
      '/attachments/:id',
      {
        config: reading,
        schema: {
          operationId: 'getAttachment',
          tags,
          summary: 'One attachment',
          params: IdParams,
          response: { 200: AttachmentResponse, ...READ_ERRORS },
        },
      },
      (req) => attachments.get(contextOf(req), req.params.id),
    );

    app.patch(
      '/attachments/:id',
      {
        config: writing,
        schema: {
          operationId: 'updateAttachment',
          tags,
          summary: 'Change the caption',
          params: IdParams,
          body: UpdateAttachmentBody,
          response: { 200: AttachmentResponse, ...WRITE_ERRORS },
        },
      },
      (req) => attachments.update(contextOf(req), req.params.id, req.body),
    );

    app.delete(
      '/attachments/:id',
      {
        config: writing,
        schema: {
          operationId: 'deleteAttachment',
          tags,
          summary: 'Delete an attachment and its bytes',
          params: IdParams,
          response: { 200: DeleteAttachmentResponse, ...DELETE_ERRORS },
        },
      },
      (req) => attachments.remove(contextOf(req), req.params.id),
    );
  };
