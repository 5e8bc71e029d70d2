import type { Readable } from 'node:stream';
import { transaction } from '../../db/transaction.ts';
import { assertScope, type RequestContext, type Scope } from '../../core/context.ts';
import { ApiError, notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, newestFirstAfter, newestFirstKey, newestFirstOrder, paginate } from '../../core/pagination.ts';
import type { Import } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import type { HoursBatchRecorder } from '../hours/hours-batch.operations.ts';
import type { AttachmentStorage } from '../attachments/attachment-storage-interface.adapter.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import { csvLine } from './import-csv.adapter.ts';
import { settle } from './import-fields.rules.ts';
import { handlerOf } from './import-registry.operations.ts';
import { createImportRunner, IMPORT_LEASE_SEC } from './import-run.job.ts';
import { errorRows, findImport, pageRows } from './imports.repository.ts';
import {
  EMPTY_COUNTS,
  ImportMapping,
  ImportOptions,
  toImportDetail,
  type ImportCounts,
  type ImportOptionsInput,
  type ImportType,
} from './imports.schemas.ts';
import { createImportMappings } from './import-mappings.service.ts';

/** What each type's rows write: a key needs this scope too to import, commit or roll back that type. */
export const TYPE_SCOPES: Record<ImportType, Scope> = {
  assets: 'assets:write',
  meter_readings: 'hours:write',
  fuel_entries: 'fuel:write',
  parts: 'parts:write',
  stock_counts: 'parts:write',
  tools: 'tools:write',
  vendors: 'purchasing:write',
};
/** A completed import can be rolled back this long. */
export const ROLLBACK_WINDOW_MS = 24 * 3600 * 1000;

export interface ImportSpec {
  type: ImportType;
  mappingId?: string;
  mapping?: Record<string, string | null>;
  options?: ImportOptionsInput;
}

type Source = { upload: Readable } | { attachmentId: string };

type Deps = Pick<ServiceDeps, 'db' | 'log' | 'background' | 'config' | 'billing'>;

export function createImportService(deps: Deps, hours: HoursBatchRecorder, storage: AttachmentStorage) {
  const { db } = deps;
  const runner = createImportRunner(deps, hours, storage);
  const mappings = createImportMappings(db);

  async function owned(ctx: RequestContext, id: string): Promise<Import> {
    const imp = await findImport(db, ctx.orgId, id);
    if (!imp) throw notFound('Import');
    return imp;
  }

  /** The import's type's write scope, and a type this server imports. */
  function admit(ctx: RequestContext, type: ImportType) {
    assertScope(ctx, TYPE_SCOPES[type]);
    if (!handlerOf(type))
      throw new ApiError(422, 'import_type_unsupported', `Imports of ${type} are not available on this server yet`);
  }

  return {
    ...mappings,
    tick: () => runner.tick(),
    stop: () => runner.stop(),

    /** Parses the multipart variant's JSON text fields (mapping, options) as the JSON variant would. */
    parseJsonField(name: 'mapping' | 'options', text: string | undefined) {
      if (text === undefined || text.trim() === '') return undefined;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new ValidationError({ [name]: 'must be JSON text' });
      }
      const parsed = (name === 'mapping' ? ImportMapping : ImportOptions).safeParse(value);
      if (!parsed.success)
        throw new ValidationError({
          [name]: parsed.error.issues.map((i) => `${i.path.join('.') || name}: ${i.message}`).join('; '),
        });
      return parsed.data;
    },

    async start(ctx: RequestContext, spec: ImportSpec, source: Source) {
      admit(ctx, spec.type);
      let mapping = spec.mapping ?? {};
      let options: ImportOptionsInput = spec.options ?? {};
      if (spec.mappingId) {
        const saved = await mappings.owned(ctx, spec.mappingId);
        if (saved.type !== spec.type)
          throw new ValidationError({ mappingId: `is a mapping of ${saved.type}, not ${spec.type}` });
        mapping = { ...(saved.mapping as Record<string, string | null>), ...mapping };
        options = { ...(saved.options as ImportOptionsInput), ...options };
      }
      settle(options);
      if ('attachmentId' in source) {
        const attachment = await db.prisma.attachment.findFirst({
          where: { id: source.attachmentId, orgId: ctx.orgId },
        });
        if (!attachment) throw notFound('Attachment');
        if (attachment.status !== 'READY')
          throw new ValidationError({ uploadAttachmentId: 'the attachment has not been uploaded yet' });
        if (!['text/csv', 'text/plain'].includes(attachment.contentType))
          throw new ValidationError({ uploadAttachmentId: `is ${attachment.contentType}, not a CSV file` });
      }
      const imp = await db.prisma.import.create({
        data: {
          orgId: ctx.orgId,
          type: spec.type,
          status: 'validating',
          source: 'upload' in source ? 'upload' : 'attachment',
          uploadAttachmentId: 'attachmentId' in source ? source.attachmentId : null,
          mappingId: spec.mappingId ?? null,
          mapping,
          options,
          counts: EMPTY_COUNTS,
          createdByKeyId: ctx.keyId,
          actorId: ctx.actorId,
          leaseOwner: runner.owner,
          leaseUntil: new Date(Date.now() + IMPORT_LEASE_SEC * 1000),
        },
      });
      if ('upload' in source) await runner.acceptUpload(imp, source.upload);
      else runner.acceptAttachment(imp);
      return { ok: true as const, importId: imp.id };
    },

    async list(ctx: RequestContext, q: { limit: number; cursor?: string }) {
      const rows = await db.prisma.import.findMany({
        where: { orgId: ctx.orgId, ...newestFirstAfter(decodeCursor(q.cursor, 2)) },
        orderBy: newestFirstOrder,
        take: q.limit + 1,
      });
      const { page, nextCursor } = paginate(rows, q.limit, newestFirstKey);
      return { ok: true as const, imports: page.map(toImportDetail), nextCursor };
    },

    async get(ctx: RequestContext, id: string) {
      return { ok: true as const, import: toImportDetail(await owned(ctx, id)) };
    },

    async errors(ctx: RequestContext, id: string, q: { limit: number; cursor?: string }) {
      await owned(ctx, id);
      const after = Number(decodeCursor(q.cursor, 1)?.[0] ?? 0);
      const rows = await errorRows(db.sql, ctx.orgId, id, after, q.limit + 1);
      const { page, nextCursor } = paginate(rows, q.limit, (r) => [r.rowNumber]);
      return {
        ok: true as const,
        errors: page.map((r) => ({
          row: r.rowNumber,
          column: r.errorColumn,
          value: r.errorValue,
          code: r.errorCode,
          message: r.errorMessage,
        })),
        nextCursor,
      };
    },

    /** The rejected rows as they came, with an error column, streamed page by page. */
    async errorsCsv(ctx: RequestContext, id: string): Promise<AsyncIterable<string>> {
      const imp = await owned(ctx, id);
      const delimiter = imp.delimiter ?? ',';
      const headers = (imp.headers as string[] | null) ?? [];
      return (async function* () {
        yield `${csvLine([...headers, 'error'], delimiter)}\r\n`;
        let after = 0;
        for (;;) {
          const rows = await errorRows(db.sql, ctx.orgId, id, after, 1000);
          if (rows.length === 0) return;
          after = rows[rows.length - 1]!.rowNumber;
          let chunk = '';
          for (const r of rows) {
            const cells = headers.map((_, i) => r.raw[i] ?? '');
            chunk += `${csvLine([...cells, `row ${r.rowNumber}: ${r.errorCode}: ${r.errorMessage}`], delimiter)}\r\n`;
          }
          yield chunk;
        }
      })();
    },

    async rows(ctx: RequestContext, id: string, q: { limit: number; cursor?: string }) {
      await owned(ctx, id);
      const after = Number(decodeCursor(q.cursor, 1)?.[0] ?? 0);
      const rows = await pageRows(db.sql, ctx.orgId, id, after, q.limit + 1);
      const { page, nextCursor } = paginate(rows, q.limit, (r) => [r.rowNumber]);
      return {
        ok: true as const,
        rows: page.map((r) => ({
          row: r.rowNumber,
          action: r.action,
          targetId: r.targetId,
          resultId: r.resultId,
          errorCode: r.errorCode,
          values: r.values,
        })),
        nextCursor,
      };
    },

    async commit(ctx: RequestContext, id: string) {
      const imp = await owned(ctx, id);
      assertScope(ctx, TYPE_SCOPES[imp.type as ImportType]);
      if (imp.status !== 'validated')
        throw new ApiError(409, 'import_not_ready', `The import is ${imp.status}; only a validated import commits`);
      const counts = imp.counts as ImportCounts;
      if (counts.error > 0 && settle(imp.options as ImportOptionsInput).onError === 'reject_all')
        throw new ApiError(
          409,
          'import_has_errors',
          `${counts.error} rows are in error (GET /imports/${id}/errors) and onError is reject_all: nothing was written`,
        );
      try {
        const { count } = await db.prisma.import.updateMany({
          where: { id, orgId: ctx.orgId, status: 'validated' },
          data: {
            status: 'committing',
            commitPhase: 'check',
            committedByKeyId: ctx.keyId,
            actorId: ctx.actorId ?? imp.actorId,
            committedAt: new Date(),
            leaseOwner: runner.owner,
            leaseUntil: new Date(Date.now() + IMPORT_LEASE_SEC * 1000),
          },
        });
        if (count === 0) throw new ApiError(409, 'import_not_ready', 'The import is already committing');
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        throw new ApiError(
          409,
          'import_commit_in_progress',
          `Another ${imp.type} import is committing; commit this one once it has ended`,
        );
      }
      runner.startCommit(id);
      return { ok: true as const, importId: id };
    },

    async rollback(ctx: RequestContext, id: string) {
      const imp = await owned(ctx, id);
      assertScope(ctx, TYPE_SCOPES[imp.type as ImportType]);
      if (imp.status !== 'completed' && imp.status !== 'partially_completed')
        throw new ApiError(409, 'import_not_ready', `The import is ${imp.status}; only a completed import rolls back`);
      if (!imp.completedAt || Date.now() - imp.completedAt.getTime() > ROLLBACK_WINDOW_MS)
        throw new ApiError(409, 'import_rollback_expired', 'The import completed more than 24 hours ago');
      const handler = handlerOf(imp.type)!;
      await transaction(db, async (tx) => {
        const { count } = await tx.import.updateMany({
          where: { id, orgId: ctx.orgId, status: imp.status },
          data: { status: 'rolled_back', rolledBackAt: new Date() },
        });
        if (count === 0) throw new ApiError(409, 'import_not_ready', 'The import is being rolled back already');
        await handler.rollback(tx, ctx, id);
      });
      handler.afterRollback?.(deps, ctx);
      return { ok: true as const, importId: id, status: 'rolled_back' as const };
    },
  };
}

export type ImportService = ReturnType<typeof createImportService>;
