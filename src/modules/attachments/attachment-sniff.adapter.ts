import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { TextDecoder } from 'node:util';
import { ApiError, ValidationError } from '../../core/errors.ts';
import { legacyOfficeType, textRefusal, textSubtype } from './attachment-types.rules.ts';

/** Bytes read before the type is decided: enough for file-type to find an Office file's parts in its zip. */
export const HEAD_BYTES = 64 * 1024;

export const unsupportedType = (why: string) =>
  new ApiError(415, 'unsupported_media_type', `This file type is not accepted: ${why}`);
export const fileTooLarge = (limit: number) =>
  new ApiError(413, 'file_too_large', `The file is larger than the limit of ${limit} bytes`);
export const quotaExceeded = () =>
  new ApiError(413, 'quota_exceeded', "The organisation's attachment storage quota would be exceeded");

const FT_TYPES: Record<string, string> = {
  'image/jpeg': 'image/jpeg',
  'image/png': 'image/png',
  'image/webp': 'image/webp',
  'image/gif': 'image/gif',
  'image/heic': 'image/heic',
  'image/heic-sequence': 'image/heic',
  'image/heif': 'image/heif',
  'image/heif-sequence': 'image/heif',
  'application/pdf': 'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document':
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet':
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation':
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

export interface SniffInput {
  head: Buffer;
  filename: string;
  declared?: string;
}

/** The content type the bytes show, or a 415: binary signatures first, then the rules for text. */
export async function detectType({ head, filename, declared }: SniffInput, allowed: readonly string[]) {
  // An ES module (no lazyModule), loaded with the first upload rather than at start-up.
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(head);
  let type: string;
  if (found) {
    const mapped = found.mime === 'application/x-cfb' ? legacyOfficeType(filename) : FT_TYPES[found.mime];
    if (!mapped) throw unsupportedType(`the content is ${found.mime}`);
    type = mapped;
  } else {
    const text = head.toString('utf8');
    const refusal = textRefusal(text);
    if (refusal) throw unsupportedType(refusal);
    type = textSubtype(text, filename, declared);
  }
  if (!allowed.includes(type)) throw unsupportedType(`${type} is not among the accepted types`);
  return type;
}

export interface InspectResult {
  size: number;
  sha256: string;
  contentType: string;
}

/**
 * A pass-through stream that counts, hashes and types the bytes on their way to storage: the type is decided on
 * the first HEAD_BYTES (a refusal stops the upload there), text is checked as UTF-8 without NUL over the whole
 * stream, and crossing `limit` fails with `overLimit()` at once, before the rest is read.
 */
export class Inspector extends Transform {
  private count = 0;
  private readonly hash: Hash = createHash('sha256');
  private held: Buffer[] = [];
  private heldBytes = 0;
  private type: string | null = null;
  private decoder: TextDecoder | null = null;

  constructor(
    private readonly limit: number,
    private readonly overLimit: () => ApiError,
    private readonly sniff: (head: Buffer) => Promise<string>,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.limit) return done(this.overLimit());
    this.hash.update(chunk);
    if (this.type !== null) return done(this.checkText(chunk, false) ?? undefined, chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes < HEAD_BYTES) return done();
    this.decide().then(() => done(), done);
  }

  override _flush(done: TransformCallback): void {
    const finish = () => done(this.decoder ? (this.checkText(Buffer.alloc(0), true) ?? undefined) : undefined);
    if (this.type !== null) return finish();
    if (this.count === 0) return done(new ValidationError({ file: 'is empty' }, 'The file is empty'));
    this.decide().then(finish, done);
  }

  private async decide(): Promise<void> {
    const head = Buffer.concat(this.held);
    this.type = await this.sniff(head);
    if (this.type.startsWith('text/')) this.decoder = new TextDecoder('utf-8', { fatal: true });
    const error = this.checkText(head, false);
    if (error) throw error;
    this.held = [];
    this.push(head);
  }

  private checkText(chunk: Buffer, end: boolean): ApiError | null {
    if (!this.decoder) return null;
    if (chunk.includes(0)) return unsupportedType('text with NUL bytes is binary');
    try {
      this.decoder.decode(chunk, { stream: !end });
    } catch {
      return unsupportedType('text that is not valid UTF-8');
    }
    return null;
  }

  /** Once the stream has ended. */
  result(): InspectResult {
    return { size: this.count, sha256: this.hash.digest('hex'), contentType: this.type ?? 'application/octet-stream' };
  }
}
