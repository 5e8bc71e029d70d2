import { Readable } from 'node:stream';
import { lazyModule } from '../../core/lazy-module.ts';
import type { Attachment } from '../../generated/prisma/client.ts';
import { ApiError, notFound } from '../../core/errors.ts';
import { assertScope, type RequestContext } from '../../core/context.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { createStorage } from './attachment-storage-from-config.adapter.ts';
import { storageUnavailable, type ByteRange } from './attachment-storage-interface.adapter.ts';
import { makeThumbnail } from './attachment-thumbnail.adapter.ts';
import { createUploadTokens } from './attachment-token.adapter.ts';
import {
  isImage,
  isThumbnailable,
  asciiFallback,
  downloadName,
  KNOWN_TYPES,
  mayBeInline,
  READ_SCOPES,
  servedType,
  WRITE_SCOPES,
  unknownTypes,
  type SubjectType,
} from './attachment-types.rules.ts';
import { createAttachmentUploads } from './attachment-upload.service.ts';
import { listAttachments } from './attachments.repository.ts';
import { removeRow, sweepAttachments } from './attachment-sweep.job.ts';
import { toAttachmentRow, type ListAttachmentsInput } from './attachments.schemas.ts';
import { parseRange, etagMatches } from './attachment-range.rules.ts';

// Loaded on the first download, not at start-up.
const lazyContentDisposition = lazyModule<typeof import('content-disposition')>('content-disposition');
/** RFC 6266: an ASCII `filename` for every client, and `filename*=UTF-8''…` when the name is not plain ASCII. */
const disposition = (name: string, type: 'attachment' | 'inline') =>
  lazyContentDisposition()(name, { type, fallback: asciiFallback(name) });

/** The scope of each subject type, which this service checks: the routes declare them so the contract names them. */
export const SUBJECT_SCOPES = { read: READ_SCOPES, write: WRITE_SCOPES } as const;

/** What the content and thumbnail routes answer: status, headers and, but for 304/416, a body. */
export interface Download {
  status: 200 | 206 | 304 | 416;
  headers: Record<string, string>;
  body: Readable | null;
}

const SANDBOX = "default-src 'none'; sandbox";

export function createAttachmentService({ config, db, secretBox }: Pick<ServiceDeps, 'config' | 'db' | 'secretBox'>) {
  const storage = createStorage(config.attachments);
  const allowed = config.attachments.types ?? KNOWN_TYPES;
  const unknown = unknownTypes([...allowed]);
  if (unknown.length)
    throw new Error(`ATTACHMENT_TYPES: ${unknown.join(', ')} cannot be accepted (known: ${KNOWN_TYPES.join(', ')})`);
  const baseUrl = config.publicBaseUrl;
  const uploads = createAttachmentUploads({ config, db, storage, tokens: createUploadTokens(secretBox), allowed });

  async function owned(ctx: RequestContext, id: string, scopes: typeof READ_SCOPES | typeof WRITE_SCOPES) {
    const row = await db.prisma.attachment.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!row) throw notFound('Attachment');
    assertScope(ctx, scopes[row.subjectType as SubjectType]);
    return row;
  }

  async function ready(ctx: RequestContext, id: string) {
    const row = await owned(ctx, id, READ_SCOPES);
    if (row.status !== 'READY' || !row.storageKey || !row.sha256)
      throw new ApiError(409, 'upload_incomplete', 'The file has not been uploaded yet');
    return row as Attachment & { storageKey: string; sha256: string };
  }

  /** Storage failures are 503 storage_unavailable; a missing object (lost bytes) is a 404. */
  async function open(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      return await storage.read(key, range);
    } catch (err) {
      const code = (err as { code?: string; name?: string }).code ?? (err as { name?: string }).name;
      if (code === 'ENOENT' || code === 'NoSuchKey' || code === 'NotFound') return null;
      throw storageUnavailable(err);
    }
  }

  const common = (etag: string) => ({
    etag,
    'x-content-type-options': 'nosniff',
    'content-security-policy': SANDBOX,
    'cache-control': 'private, no-cache',
  });

  /**
   * Decoding a large image can take hundreds of megabytes (a 49-megapixel GIF about 250 MB): one decode at a time
   * per process, and requests for the same thumbnail share it instead of each decoding the image again.
   */
  const making = new Map<string, Promise<Buffer>>();
  let decoding: Promise<unknown> = Promise.resolve();
  function thumbnailOnce(key: string, contentKey: string): Promise<Buffer> {
    const current = making.get(key);
    if (current) return current;
    const made = decoding.then(() => makeAndStore(key, contentKey));
    decoding = made.catch(() => undefined);
    making.set(key, made);
    void made.finally(() => making.delete(key)).catch(() => undefined);
    return made;
  }
  async function makeAndStore(key: string, contentKey: string): Promise<Buffer> {
    const source = await open(contentKey);
    if (!source) throw notFound('Attachment content');
    let bytes: Buffer;
    try {
      bytes = await makeThumbnail(source);
    } catch {
      source.destroy();
      throw new ApiError(404, 'thumbnail_unavailable', 'The image could not be decoded');
    }
    await storage.put(key, bytes, 'image/webp').catch((err) => {
      throw storageUnavailable(err);
    });
    return bytes;
  }

  return {
    storage,
    ...uploads,

    async list(ctx: RequestContext, q: ListAttachmentsInput) {
      assertScope(ctx, READ_SCOPES[q.subjectType]);
      const after = timeIdCursor(decodeCursor(q.cursor, 2));
      const rows = await listAttachments(db.sql, ctx.orgId, q.subjectType, q.subjectId, after, q.limit + 1);
      if (!rows) throw notFound('Subject');
      const { page, nextCursor } = paginate(rows, q.limit, (a) => [new Date(a.createdAt).toISOString(), a.id]);
      return {
        ok: true as const,
        attachments: page.map((a) => toAttachmentRow({ ...a, createdAt: new Date(a.createdAt) }, baseUrl)),
        nextCursor,
      };
    },

    async get(ctx: RequestContext, id: string) {
      return { ok: true as const, attachment: toAttachmentRow(await owned(ctx, id, READ_SCOPES), baseUrl) };
    },

    async update(ctx: RequestContext, id: string, patch: { caption: string | null }) {
      await owned(ctx, id, WRITE_SCOPES);
      const caption = patch.caption?.trim() || null;
      const [row] = await db.prisma.attachment.updateManyAndReturn({ where: { id }, data: { caption } });
      // Deleted between the read and the write: gone, as a read after the delete would say.
      if (!row) throw notFound('Attachment');
      return { ok: true as const, attachment: toAttachmentRow(row, baseUrl) };
    },

    /** The row and, when no other row shares them, the bytes and thumbnail, before the answer. */
    async remove(ctx: RequestContext, id: string) {
      await owned(ctx, id, WRITE_SCOPES);
      const removed = await removeRow(db, storage, id).catch((err) => {
        throw err instanceof ApiError ? err : storageUnavailable(err);
      });
      if (!removed) throw notFound('Attachment');
      return { ok: true as const, attachmentId: id };
    },

    sweep: (now: Date) => sweepAttachments(db, storage, now, config.attachments.orphanGraceSec),

    async content(
      ctx: RequestContext,
      id: string,
      req: { range?: string; ifRange?: string; ifNoneMatch?: string; disposition: 'attachment' | 'inline' },
    ): Promise<Download> {
      const row = await ready(ctx, id);
      const type = req.disposition === 'inline' && mayBeInline(row.contentType) ? 'inline' : 'attachment';
      const headers: Record<string, string> = {
        ...common(`"${row.sha256}"`),
        'content-type': servedType(row.contentType),
        'content-disposition': disposition(downloadName(row.filename, row.contentType), type),
        'accept-ranges': 'bytes',
      };
      if (etagMatches(req.ifNoneMatch, row.sha256)) return { status: 304, headers, body: null };
      // If-Range (RFC 9110 13.1.5): a range of these bytes only; any other validator gets the whole file.
      const rangeApplies = req.ifRange === undefined || req.ifRange.trim() === `"${row.sha256}"`;
      const range = parseRange(rangeApplies ? req.range : undefined, row.size);
      if (range === 'unsatisfiable')
        return { status: 416, headers: { ...headers, 'content-range': `bytes */${row.size}` }, body: null };
      const body = await open(row.storageKey, range ?? undefined);
      if (!body) throw notFound('Attachment content');
      if (!range) return { status: 200, headers: { ...headers, 'content-length': String(row.size) }, body };
      return {
        status: 206,
        headers: {
          ...headers,
          'content-range': `bytes ${range.start}-${range.end}/${row.size}`,
          'content-length': String(range.end - range.start + 1),
        },
        body,
      };
    },

    /** Made on first request and stored beside the content; images only. */
    async thumbnail(ctx: RequestContext, id: string, ifNoneMatch?: string): Promise<Download> {
      const row = await ready(ctx, id);
      if (!isImage(row.contentType)) throw new ApiError(404, 'not_found', 'Only images have thumbnails');
      if (!isThumbnailable(row.contentType))
        throw new ApiError(404, 'thumbnail_unavailable', `No thumbnail can be made of ${row.contentType} here`);
      const tag = `"${row.sha256}-512.webp"`;
      const headers = { ...common(tag), 'content-type': 'image/webp' };
      if (etagMatches(ifNoneMatch, `${row.sha256}-512.webp`)) return { status: 304, headers, body: null };
      const key = storage.thumbnailKey(row.storageKey);
      const stored = await open(key);
      if (stored) return { status: 200, headers, body: stored };
      const bytes = await thumbnailOnce(key, row.storageKey);
      return {
        status: 200,
        headers: { ...headers, 'content-length': String(bytes.length) },
        body: Readable.from([bytes]),
      };
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;
