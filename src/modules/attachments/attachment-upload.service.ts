import { randomUUID } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import type { Attachment } from '../../generated/prisma/client.ts';
import { ApiError, notFound, ValidationError } from '../../core/errors.ts';
import { assertScope, type RequestContext } from '../../core/context.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { storageUnavailable } from './attachment-storage-interface.adapter.ts';
import type { AttachmentStorage, StagedObject } from './attachment-storage-interface.adapter.ts';
import { detectType, fileTooLarge, Inspector, quotaExceeded, unsupportedType } from './attachment-sniff.adapter.ts';
import type { UploadTokens } from './attachment-token.adapter.ts';
import { cleanFilename, KNOWN_TYPES, WRITE_SCOPES, type SubjectType } from './attachment-types.rules.ts';
import { bytesUsed, lockKey, lockQuota, subjectExists } from './attachments.repository.ts';
import {
  contentUrlOf,
  toAttachmentRow,
  type CreateUploadInput,
  type MultipartFieldsInput,
} from './attachments.schemas.ts';

export interface IncomingFile {
  filename: string | undefined;
  declaredType: string | undefined;
  stream: Readable;
}

export interface UploadParts {
  config: ServiceDeps['config'];
  db: ServiceDeps['db'];
  storage: AttachmentStorage;
  tokens: UploadTokens;
  allowed: readonly string[];
}

const interrupted = () => new ApiError(400, 'upload_interrupted', 'The upload ended before the file was complete');

/** An upload's failure as an API error: the client's stream failing is 400, the store failing 503; never a 500. */
function asUploadError(err: unknown, sourceFailed: boolean): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code;
  if (sourceFailed || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET') return interrupted();
  return storageUnavailable(err);
}

/** The attachment is READY: its event goes out in the same transaction. */
export async function emitCreated(tx: Tx, a: Attachment, baseUrl: string) {
  const user = a.createdById
    ? await tx.user.findUnique({ where: { id: a.createdById }, select: { name: true } })
    : null;
  await emit(tx, a.orgId, 'attachment.created', {
    attachmentId: a.id,
    subjectType: a.subjectType as SubjectType,
    subjectId: a.subjectId,
    filename: a.filename,
    contentType: a.contentType,
    size: a.size,
    sha256: a.sha256 ?? '',
    caption: a.caption,
    contentUrl: contentUrlOf(baseUrl, a.id),
    createdBy: { userId: a.createdById, name: user?.name ?? null },
    createdAt: a.createdAt.toISOString(),
  });
}

export function createAttachmentUploads({ config, db, storage, tokens, allowed }: UploadParts) {
  const { maxBytes, quotaBytes } = config.attachments;
  const baseUrl = config.publicBaseUrl;

  async function ownedSubject(ctx: RequestContext, type: SubjectType, id: string, tx: Tx = db.prisma) {
    assertScope(ctx, WRITE_SCOPES[type]);
    if (!(await subjectExists(tx, ctx.orgId, type, id))) throw notFound('Subject');
  }

  /** Streams `source` through the inspector into storage; the inspector's verdict with the staged bytes. */
  async function stageInspected(source: Readable, inspector: Inspector, id: string) {
    let sourceFailed = false;
    source.once('error', () => (sourceFailed = true));
    const piped = pipeline(source, inspector, () => undefined) as Readable;
    let staged: StagedObject;
    try {
      staged = await storage.stage(piped, id);
    } catch (err) {
      // The source may have failed before this listened (a body already cut short): its stored error says so.
      sourceFailed ||= source.errored !== null;
      source.destroy();
      throw asUploadError(err, sourceFailed);
    }
    return { staged, result: inspector.result() };
  }

  const inspectorFor = (limit: number, over: () => ApiError, filename: string, declared?: string) =>
    new Inspector(limit, over, (head) => detectType({ head, filename, declared }, allowed));

  /**
   * Moves staged bytes to their key with the row change, under the key's lock; the bytes are dropped on failure.
   * Their fsync starts first and runs while the transaction does its statements.
   */
  async function commitWith<T>(staged: StagedObject, key: string, change: (tx: Tx) => Promise<T>): Promise<T> {
    // Awaited by commit(); the handler only keeps a failure that comes first from being unhandled.
    staged.persist().catch(() => undefined);
    try {
      return await transaction(db, async (tx) => {
        await lockKey(tx, key);
        const out = await change(tx);
        await staged.commit(key);
        return out;
      });
    } catch (err) {
      await staged.discard().catch(() => undefined);
      throw err;
    }
  }

  async function checkQuota(tx: Tx, orgId: string, adding: number) {
    if (quotaBytes <= 0) return;
    await lockQuota(tx, orgId);
    if ((await bytesUsed(tx, orgId)) + adding > quotaBytes) throw quotaExceeded();
  }

  return {
    async upload(ctx: RequestContext, fields: MultipartFieldsInput, file: IncomingFile) {
      await ownedSubject(ctx, fields.subjectType, fields.subjectId);
      const room = quotaBytes > 0 ? quotaBytes - (await bytesUsed(db.prisma, ctx.orgId)) : Infinity;
      if (room <= 0) throw quotaExceeded();
      const limit = Math.min(maxBytes, room);
      const filename = cleanFilename(file.filename);
      const over = () => (limit < maxBytes ? quotaExceeded() : fileTooLarge(maxBytes));
      const id = randomUUID();
      const { staged, result } = await stageInspected(
        file.stream,
        inspectorFor(limit, over, filename, file.declaredType),
        id,
      );
      const key = storage.keyFor(id, result.sha256);
      const row = await commitWith(staged, key, async (tx) => {
        await checkQuota(tx, ctx.orgId, result.size);
        // The subject again, locked: a delete of it now waits for this row (and its trigger then removes it).
        if (!(await subjectExists(tx, ctx.orgId, fields.subjectType, fields.subjectId))) throw notFound('Subject');
        const a = await tx.attachment.create({
          data: {
            id,
            orgId: ctx.orgId,
            subjectType: fields.subjectType,
            subjectId: fields.subjectId,
            filename,
            contentType: result.contentType,
            size: result.size,
            sha256: result.sha256,
            caption: fields.caption ?? null,
            status: 'READY',
            storageKey: key,
            createdById: ctx.actorId,
          },
        });
        await emitCreated(tx, a, baseUrl);
        return a;
      });
      return {
        ok: true as const,
        attachmentId: row.id,
        size: row.size,
        sha256: result.sha256,
        contentType: row.contentType,
      };
    },

    async createUpload(ctx: RequestContext, input: CreateUploadInput) {
      await ownedSubject(ctx, input.subjectType, input.subjectId);
      if (input.size > maxBytes) throw fileTooLarge(maxBytes);
      const declared = input.contentType.split(';')[0].trim().toLowerCase();
      if (!KNOWN_TYPES.includes(declared) || !allowed.includes(declared))
        throw unsupportedType(`${declared} is not among the accepted types`);
      const id = randomUUID();
      const expiresAt = new Date(Date.now() + config.attachments.uploadUrlTtlSec * 1000);
      const key = storage.kind === 's3' ? (storage.stagingKeyFor?.(id) ?? storage.keyFor(id, '')) : null;
      const upload =
        key && storage.presignPut
          ? await storage
              .presignPut(key, declared, input.size, config.attachments.uploadUrlTtlSec)
              .catch((err: unknown) => {
                throw storageUnavailable(err);
              })
          : {
              url: `${baseUrl}/api/v1/attachments/uploads/${tokens.sign({ attachmentId: id, orgId: ctx.orgId, expiresAt })}`,
              headers: { 'Content-Type': declared },
            };
      await transaction(db, async (tx) => {
        await checkQuota(tx, ctx.orgId, input.size);
        await tx.attachment.create({
          data: {
            id,
            orgId: ctx.orgId,
            subjectType: input.subjectType,
            subjectId: input.subjectId,
            filename: cleanFilename(input.filename),
            contentType: declared,
            size: input.size,
            expectedSha256: input.sha256 ?? null,
            caption: input.caption ?? null,
            storageKey: key,
            createdById: ctx.actorId,
          },
        });
      });
      return {
        ok: true as const,
        attachmentId: id,
        upload: {
          method: 'PUT' as const,
          url: upload.url,
          headers: upload.headers,
          expiresAt: expiresAt.toISOString(),
        },
      };
    },

    /** The bytes of a local presigned upload; the token is the only credential. */
    async receive(token: string, stream: Readable) {
      const claim = tokens.verify(token, new Date());
      if (claim === 'expired') throw new ApiError(410, 'upload_expired', 'This upload URL has expired');
      if (!claim || storage.kind !== 'local')
        throw new ApiError(403, 'invalid_upload_token', 'This upload URL is not valid');
      const claimed = await db.prisma.attachment.updateManyAndReturn({
        where: {
          id: claim.attachmentId,
          orgId: claim.orgId,
          status: 'PENDING',
          // A claim older than the request deadline is one whose request was cut off without releasing it.
          OR: [{ uploadClaimedAt: null }, { uploadClaimedAt: { lt: new Date(Date.now() - config.requestTimeoutMs) } }],
        },
        data: { uploadClaimedAt: new Date() },
      });
      const row = claimed[0];
      if (!row) throw new ApiError(409, 'upload_already_used', 'This upload URL was already used');
      const release = () =>
        db.prisma.attachment.updateMany({ where: { id: row.id, status: 'PENDING' }, data: { uploadClaimedAt: null } });
      try {
        const over = () =>
          new ApiError(413, 'file_too_large', `The upload is larger than its declared ${row.size} bytes`);
        const { staged, result } = await stageInspected(stream, inspectorFor(row.size, over, row.filename), row.id);
        const mismatch =
          result.size !== row.size
            ? new ValidationError({ size: `declared ${row.size} bytes, received ${result.size}` }, 'Size mismatch')
            : row.expectedSha256 && row.expectedSha256 !== result.sha256
              ? new ValidationError({ sha256: 'does not match the bytes received' }, 'Checksum mismatch')
              : null;
        if (mismatch) {
          await staged.discard();
          throw mismatch;
        }
        const key = storage.keyFor(row.id, result.sha256);
        await commitWith(staged, key, (tx) =>
          tx.attachment.update({
            where: { id: row.id },
            data: { storageKey: key, sha256: result.sha256, contentType: result.contentType },
          }),
        );
        return { ok: true as const, attachmentId: row.id, ...result };
      } catch (err) {
        await release().catch(() => undefined);
        throw err;
      }
    },

    async complete(ctx: RequestContext, id: string) {
      const row = await db.prisma.attachment.findFirst({ where: { id, orgId: ctx.orgId } });
      if (!row) throw notFound('Attachment');
      assertScope(ctx, WRITE_SCOPES[row.subjectType as SubjectType]);
      if (row.status === 'READY') return { ok: true as const, attachment: toAttachmentRow(row, baseUrl) };
      if (storage.kind === 'local' && !row.sha256)
        throw new ApiError(409, 'upload_incomplete', 'The file has not been uploaded yet');
      const verified = storage.kind === 's3' ? await promoteBucketObject(row) : row;
      const done = await transaction(db, async (tx) => {
        const rows = await tx.attachment.updateManyAndReturn({
          where: { id, orgId: ctx.orgId, status: 'PENDING' },
          data: {
            status: 'READY',
            sha256: verified.sha256,
            contentType: verified.contentType,
            size: verified.size,
            storageKey: verified.storageKey,
          },
        });
        if (rows[0]) await emitCreated(tx, rows[0], baseUrl);
        return rows[0] ?? (await tx.attachment.findFirst({ where: { id, orgId: ctx.orgId } }));
      });
      // The staging object is no longer named by the row; one left behind is an orphan for the sweep.
      if (row.storageKey && row.storageKey !== verified.storageKey)
        await storage.remove(row.storageKey).catch(() => undefined);
      if (!done) throw notFound('Attachment');
      return { ok: true as const, attachment: toAttachmentRow(done, baseUrl) };
    },
  };

  /**
   * A bucket upload is copied from its staging key (which its URL still names) to its final key, and the copy
   * is read back once: size, checksum and type are those of the bytes served, not the client's word. A storage
   * failure is a 503; bytes refused are removed, so the same URL can be used again.
   */
  async function promoteBucketObject(row: Attachment) {
    const staging = row.storageKey!;
    const key = storage.keyFor(row.id, '');
    try {
      if ((await storage.size(staging)) === null)
        throw new ApiError(409, 'upload_incomplete', 'The file has not been uploaded yet');
      if (staging !== key) await storage.copy!(staging, key);
      return { ...row, ...(await verifyBucketObject(row, key)), storageKey: key };
    } catch (err) {
      if (!(err instanceof ApiError)) throw storageUnavailable(err);
      if (err.statusCode < 500 && err.code !== 'upload_incomplete')
        for (const k of new Set([key, staging])) await storage.remove(k).catch(() => undefined);
      throw err;
    }
  }

  async function verifyBucketObject(row: Attachment, key: string) {
    const over = () => new ApiError(413, 'file_too_large', `The upload is larger than its declared ${row.size} bytes`);
    const inspector = inspectorFor(row.size, over, row.filename, row.contentType);
    await new Promise<void>((resolve, reject) => {
      void storage.read(key).then((source) => {
        pipeline(source, inspector, (err) => (err ? reject(err) : undefined));
        inspector.on('data', () => undefined).on('end', resolve);
      }, reject);
    });
    const result = inspector.result();
    if (result.size !== row.size)
      throw new ValidationError({ size: `declared ${row.size} bytes, received ${result.size}` }, 'Size mismatch');
    if (row.expectedSha256 && row.expectedSha256 !== result.sha256)
      throw new ValidationError({ sha256: 'does not match the bytes received' }, 'Checksum mismatch');
    return result;
  }
}

export type AttachmentUploads = ReturnType<typeof createAttachmentUploads>;
