import { ErrorResponse } from '../../core/schemas.ts';
import { KNOWN_TYPES } from './attachment-types.rules.ts';

// OpenAPI fragments of the routes whose bodies are not JSON (rendered by src/contracts/openapi-rules.ts).

export const ATTACHMENT_MULTIPART_BODY = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['subjectType', 'subjectId', 'file'],
        properties: {
          subjectType: { type: 'string', enum: ['asset', 'flag', 'work_order', 'repair', 'tool'] },
          subjectId: { type: 'string' },
          caption: { type: 'string', maxLength: 1000 },
          file: { type: 'string', format: 'binary', description: 'The last part; the text fields come before it' },
        },
      },
      encoding: { file: { contentType: 'application/octet-stream' } },
      example: {
        subjectType: 'asset',
        subjectId: 'cm4k2x9q10000a8b7c6d5e4f3',
        caption: 'Left side, before the repair',
        file: '(binary data: left side.jpg)',
      },
    },
  },
};

export const UPLOAD_PUT_BODY = {
  required: true,
  content: {
    'application/octet-stream': {
      schema: { type: 'string', format: 'binary', description: 'Exactly the declared number of bytes' },
      example: '(binary data: exactly the declared number of bytes)',
    },
  },
};

/** One media type per type an attachment can have: the Content-Type is the one detected at upload. */
const bytes = (what: string) =>
  Object.fromEntries(
    KNOWN_TYPES.map((type) => [
      type,
      { schema: { type: 'string', format: 'binary', description: what }, example: `(binary data: ${what})` },
    ]),
  );

export const CONTENT_MEDIA = {
  200: bytes('the file as uploaded'),
  206: bytes('the requested bytes of the file'),
};
export const THUMBNAIL_MEDIA = {
  200: {
    'image/webp': {
      schema: { type: 'string', format: 'binary', description: 'WebP thumbnail' },
      example: '(binary WebP data: at most 512 px on the long side)',
    },
  },
};

const header = (description: string) => ({ description, required: true, schema: { type: 'string' } });
export const CONTENT_HEADERS = {
  200: {
    ETag: header('Strong: the quoted lowercase hex SHA-256 of the file'),
    'Content-Disposition': header('attachment (inline only for images and PDF with ?disposition=inline); RFC 6266'),
    'X-Content-Type-Options': header('nosniff'),
    'Content-Security-Policy': header("default-src 'none'; sandbox"),
  },
  206: { 'Content-Range': header('bytes start-end/size') },
};

const err = (description: string) => ErrorResponse.describe(description);
const scopeNote = (kind: string) => `The key lacks the subject's ${kind} scope, or the user who issued it was removed`;
const STORAGE = err('storage_unavailable: the attachment store did not answer in time');
export const UPLOAD_ERRORS = {
  403: err(scopeNote('write')),
  404: err('The subject is not in this organisation'),
  413: err('file_too_large (ATTACHMENT_MAX_BYTES) or quota_exceeded (ATTACHMENT_QUOTA_BYTES)'),
  415: err('unsupported_media_type: the bytes are not an accepted type'),
  422: err('A field is missing or invalid (the text fields must come before the file part), or the file is empty'),
  503: STORAGE,
};
export const CREATE_UPLOAD_ERRORS = {
  403: UPLOAD_ERRORS[403],
  404: UPLOAD_ERRORS[404],
  413: UPLOAD_ERRORS[413],
  415: UPLOAD_ERRORS[415],
};
export const COMPLETE_ERRORS = {
  403: err(scopeNote('write')),
  409: err('upload_incomplete: the bytes have not been uploaded'),
  413: err('file_too_large: more bytes than declared'),
  415: UPLOAD_ERRORS[415],
  422: err('Size or checksum mismatch'),
  503: STORAGE,
};
export const READ_ERRORS = { 403: err(scopeNote('read')) };
export const WRITE_ERRORS = { 403: err(scopeNote('write')) };
export const DELETE_ERRORS = { 403: err(scopeNote('write')), 503: STORAGE };
export const CONTENT_ERRORS = {
  403: err(scopeNote('read')),
  409: err('upload_incomplete: the attachment is still PENDING'),
  503: STORAGE,
};
export const PUT_UPLOAD_ERRORS = {
  403: err('invalid_upload_token: the URL is not valid'),
  409: err('upload_already_used: the URL was used'),
  410: err('upload_expired: the URL has expired'),
  413: err('file_too_large: more bytes than declared'),
  415: UPLOAD_ERRORS[415],
  422: err('Size or checksum mismatch'),
  503: STORAGE,
};
