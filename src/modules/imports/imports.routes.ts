import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../composition.ts';
import { contextOf } from '../../core/context.ts';
import { ApiError, ValidationError } from '../../core/errors.ts';
import { ErrorResponse, IdParams } from '../../core/schemas.ts';
import { abandonUnreadBody, readingBody } from '../../http/upload-body.ts';
import {
  CreateImportBody,
  CreateMappingBody,
  IMPORT_ERRORS,
  ImportAccepted,
  ImportErrorsQuery,
  ImportErrorsResponse,
  ImportListQuery,
  ImportListResponse,
  ImportResponse,
  ImportRowsResponse,
  MappingCreatedResponse,
  MappingListQuery,
  MappingListResponse,
  MultipartImportFields,
} from './imports.schemas.ts';
import { IMPORT_REQUEST_BODY, IMPORT_ERRORS_CSV } from './import-media.schemas.ts';
import { TYPE_SCOPES } from './imports.service.ts';

/** The largest file an import reads. */
const MAX_FILE_BYTES = 200 * 1024 * 1024;

export const importRoutes =
  ({ services }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const imports = services.imports;
    const tags = ['imports'];
    // Starting, committing and rolling back also need the write scope of the imported type, which the service
    // checks once it knows the type: the contract names one alternative per type's scope.
    const writing = { scope: 'imports:write', subjectScopes: TYPE_SCOPES } as const;

    // The multipart parser is registered in this child context only: every other route stays JSON-only.
    await app.register(async (upload) => {
      upload.addHook('onSend', abandonUnreadBody);
      await upload.register(multipart, {
        limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
        fileHwm: 256 * 1024,
      } as never);
      upload.post(
        '/imports',
        {
          config: writing,
          schema: {
            operationId: 'createImport',
            tags,
            summary: 'Start an import: multipart (type, mapping?, options?, then file) or JSON naming an attachment',
            description:
              'Validates the file in the background, writing nothing but the import: follow it with GET ' +
              '/imports/{id}, then commit.',
            response: {
              202: ImportAccepted,
              ...IMPORT_ERRORS,
              413: ErrorResponse.describe('file_too_large: the file is larger than 200 MB'),
              422: ErrorResponse.describe('A field is missing or invalid, or the type is not available'),
            },
            'x-request-content': IMPORT_REQUEST_BODY,
          },
        },
        async (req, reply) => {
          const ctx = contextOf(req);
          if (!req.isMultipart()) {
            const parsed = CreateImportBody.safeParse(req.body);
            if (!parsed.success) throw zodFieldErrors(parsed.error);
            const { uploadAttachmentId, ...spec } = parsed.data;
            return reply.code(202).send(await imports.start(ctx, spec, { attachmentId: uploadAttachmentId }));
          }
          const file = await req.file().catch((err: unknown) => {
            if ((err as { statusCode?: number }).statusCode === 413)
              throw new ApiError(413, 'file_too_large', (err as Error).message);
            throw new ApiError(
              400,
              'upload_interrupted',
              `The multipart body could not be read: ${(err as Error).message}`,
            );
          });
          if (!file) throw new ValidationError({ file: 'is required' }, 'No file part');
          const values: Record<string, unknown> = {};
          for (const [name, field] of Object.entries(file.fields as Record<string, unknown>)) {
            const f = (Array.isArray(field) ? field[0] : field) as { type?: string; value?: unknown };
            if (f?.type === 'field') values[name] = f.value;
          }
          const parsed = MultipartImportFields.safeParse(values);
          if (!parsed.success) throw zodFieldErrors(parsed.error);
          const spec = {
            type: parsed.data.type,
            mappingId: parsed.data.mappingId,
            mapping: imports.parseJsonField('mapping', parsed.data.mapping) as Record<string, string | null>,
            options: imports.parseJsonField('options', parsed.data.options) as never,
          };
          return readingBody(reply, file.file, async () => {
            const result = await imports.start(ctx, spec, { upload: file.file });
            if (file.file.truncated) throw new ApiError(413, 'file_too_large', 'The file is larger than 200 MB');
            return reply.code(202).send(result);
          });
        },
      );
    });

    app.get(
      '/imports',
      {
        config: { scope: 'imports:read' },
        schema: {
          operationId: 'listImports',
          tags,
          summary: 'Imports, newest first',
          querystring: ImportListQuery,
          response: { 200: ImportListResponse },
        },
      },
      (req) => imports.list(contextOf(req), req.query),
    );

    app.get(
      '/imports/:id',
      {
        config: { scope: 'imports:read' },
        schema: {
          operationId: 'getImport',
          tags,
          summary: 'An import: status, progress, counts of predicted (or written) actions',
          params: IdParams,
          response: { 200: ImportResponse },
        },
      },
      (req) => imports.get(contextOf(req), req.params.id),
    );

    app.get(
      '/imports/:id/errors',
      {
        config: { scope: 'imports:read' },
        schema: {
          operationId: 'listImportErrors',
          tags,
          summary: 'The rows in error, in file order; format=csv: the rejected rows as they came plus an error column',
          params: IdParams,
          querystring: ImportErrorsQuery,
          response: {
            200: z.union([ImportErrorsResponse, z.string().describe('format=csv: text/csv of the rejected rows')]),
          },
          'x-content': { 200: IMPORT_ERRORS_CSV },
        },
      },
      async (req, reply) => {
        const ctx = contextOf(req);
        if (req.query.format === 'csv') {
          const body = await imports.errorsCsv(ctx, req.params.id);
          reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="import-${req.params.id}-errors.csv"`);
          return reply.send(Readable.from(body) as unknown as string);
        }
        return imports.errors(ctx, req.params.id, req.query);
      },
    );

    app.get(
      '/imports/:id/rows',
      {
        config: { scope: 'imports:read' },
        schema: {
          operationId: 'listImportRows',
          tags,
          summary: 'Every row with its action (create, update, unchanged, error) and the id it matched',
          params: IdParams,
          querystring: ImportListQuery,
          response: { 200: ImportRowsResponse },
        },
      },
      (req) => imports.rows(contextOf(req), req.params.id, req.query),
    );

    app.post(
      '/imports/:id/commit',
      {
        config: writing,
        schema: {
          operationId: 'commitImport',
          tags,
          summary: 'Write what validation predicted, in the background',
          params: IdParams,
          response: {
            202: ImportAccepted,
            ...IMPORT_ERRORS,
            409: ErrorResponse.describe(
              'import_has_errors (reject_all with rows in error), import_not_ready (not validated) or ' +
                'import_commit_in_progress (another import of the type is committing)',
            ),
          },
        },
      },
      async (req, reply) => reply.code(202).send(await imports.commit(contextOf(req), req.params.id)),
    );

    app.post(
      '/imports/:id/rollback',
      {
        config: writing,
        schema: {
          operationId: 'rollbackImport',
          tags,
          summary: 'Within 24 hours of completion: delete what the import created, restore what it updated',
          params: IdParams,
          response: {
            200: z.object({ ok: z.literal(true), importId: z.string(), status: z.literal('rolled_back') }),
            ...IMPORT_ERRORS,
            409: ErrorResponse.extend({
              rows: z
                .array(z.number().int())
                .optional()
                .describe('import_rows_changed: the rows of the file whose records changed since'),
            }).describe(
              'import_rows_changed (records changed since; `rows` lists them), import_rollback_expired or ' +
                'import_not_ready',
            ),
          },
        },
      },
      (req) => imports.rollback(contextOf(req), req.params.id),
    );

    app.post(
      '/imports/mappings',
      {
        config: { scope: 'imports:write' },
        schema: {
          operationId: 'createImportMapping',
          tags,
          summary: 'Save a column mapping and options to reuse with mappingId',
          body: CreateMappingBody,
          response: { 201: MappingCreatedResponse, 409: ErrorResponse.describe('mapping_name_taken') },
        },
      },
      async (req, reply) => reply.code(201).send(await imports.createMapping(contextOf(req), req.body)),
    );

    app.get(
      '/imports/mappings',
      {
        config: { scope: 'imports:read' },
        schema: {
          operationId: 'listImportMappings',
          tags,
          summary: 'Saved mappings, newest first',
          querystring: MappingListQuery,
          response: { 200: MappingListResponse },
        },
      },
      (req) => imports.listMappings(contextOf(req), req.query),
    );
  };

function zodFieldErrors(error: z.ZodError) {
  const fieldErrors: Record<string, string> = {};
  for (const issue of error.issues) fieldErrors[issue.path.join('.') || 'body'] ??= issue.message;
  return new ValidationError(fieldErrors);
}
