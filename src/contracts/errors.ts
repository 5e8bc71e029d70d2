/**
 * The error codes each status can carry, published as enums so clients and gateways can switch on them.
 * Spec rule (Versioning 2): new codes may appear within v1, so clients must treat an unknown code like the
 * status's generic meaning. Keep in step with src/http/api-chain.ts, error-handler.ts, batch.ts and the
 * services; the conformance test (test/contracts/conformance.test.ts) fails on a code missing here.
 */
type Json = Record<string, any>;

export const AUTH_ERRORS = ['missing_bearer', 'malformed_token', 'unknown_token', 'revoked', 'expired'] as const;
const BATCH_ERRORS = ['invalid_envelope', 'empty_batch', 'batch_too_large'];
/** Raised before routing when a path parameter has a malformed percent-encoding. */
const URL_ERRORS = ['bad_url', 'bad_request'];

export interface ErrorContext {
  operationId: string;
  method: string;
  /** The scopes of the operation's security alternatives (one, or one per subject type; none for any key). */
  scopes: string[];
  hasBody: boolean;
  hasParams: boolean;
  batch: boolean;
}

/**
 * POST and PATCH take the generic Idempotency-Key (src/http/idempotency.ts) but these, which implement the
 * header themselves (route config `idempotency: 'own'`; the route-docs test keeps this list in step).
 */
export const OWN_IDEMPOTENCY_OPERATIONS = new Set(['createHoursLog', 'uploadAttachment']);
export const takesIdempotencyKey = (method: string, operationId: string) =>
  ['POST', 'PATCH'].includes(method) && !OWN_IDEMPOTENCY_OPERATIONS.has(operationId);

/** Per-operation 400 codes the service layer adds beyond the generic ones. */
const EXTRA_400: Record<string, string[]> = {
  updateProject: ['duplicate_code'],
  uploadAttachment: ['upload_interrupted'],
  putAttachmentUpload: ['upload_interrupted'],
};

const UPLOAD_413 = ['file_too_large', 'quota_exceeded'];
const STORAGE_503 = ['storage_unavailable'];
/** Per-operation codes of statuses the service layer adds (merged with the generic codes of that status). */
const EXTRA: Record<string, Partial<Record<number, string[]>>> = {
  uploadAttachment: { 413: UPLOAD_413, 503: STORAGE_503 },
  createAttachmentUpload: { 413: UPLOAD_413 },
  completeAttachmentUpload: {
    409: ['upload_incomplete'],
    413: ['file_too_large'],
    503: STORAGE_503,
  },
  deleteAttachment: { 503: STORAGE_503 },
  getAttachmentContent: { 409: ['upload_incomplete'], 503: STORAGE_503 },
  getAttachmentThumbnail: {
    404: ['thumbnail_unavailable'],
    409: ['upload_incomplete'],
    503: STORAGE_503,
  },
  putAttachmentUpload: {
    403: ['invalid_upload_token'],
    409: ['upload_already_used'],
    410: ['upload_expired'],
    413: ['file_too_large'],
    503: STORAGE_503,
  },
};

const refError = { $ref: '#/components/schemas/Error' };
const codes = (values: string[], extra: Json = {}, required: string[] = []): Json => ({
  allOf: [
    refError,
    {
      type: 'object',
      properties: { error: { type: 'string', enum: values }, ...extra },
      required: ['error', ...required],
    },
  ],
});

/** The schema of a generic error response of `status` for one operation, or null to keep what the route declared. */
export function errorSchema(status: number, ctx: ErrorContext): Json | null {
  const extra = EXTRA[ctx.operationId]?.[status];
  if (extra) {
    const base = genericErrorSchema(status, ctx);
    const enumOf = (schema: Json | null): string[] => {
      const ref = schema?.$ref as string | undefined;
      const target = ref ? ERROR_COMPONENTS[ref.split('/').pop()!] : schema;
      return target?.allOf?.[1]?.properties?.error?.enum ?? [];
    };
    const inUse = status === 409 && takesIdempotencyKey(ctx.method, ctx.operationId) ? ['idempotency_key_in_use'] : [];
    return codes([...enumOf(base), ...extra, ...inUse]);
  }
  return genericErrorSchema(status, ctx);
}

function genericErrorSchema(status: number, ctx: ErrorContext): Json | null {
  const write = ['POST', 'PATCH', 'PUT', 'DELETE'].includes(ctx.method);
  switch (status) {
    case 400:
      return codes([
        ...(ctx.hasBody ? ['invalid_json'] : []),
        ...(ctx.batch ? BATCH_ERRORS : []),
        ...(EXTRA_400[ctx.operationId] ?? []),
        ...(ctx.hasParams ? URL_ERRORS : []),
      ]);
    case 401:
      return { $ref: '#/components/schemas/AuthenticationError' };
    case 403:
      return codes([...ctx.scopes.map((scope) => `missing_scope:${scope}`), ...(write ? ['key_creator_deleted'] : [])]);
    case 404:
      return { $ref: '#/components/schemas/NotFoundError' };
    case 413:
      return { $ref: '#/components/schemas/PayloadTooLargeError' };
    case 415:
      return { $ref: '#/components/schemas/UnsupportedMediaTypeError' };
    case 422:
      // The same Idempotency-Key with another method, path or body is refused before anything runs.
      return takesIdempotencyKey(ctx.method, ctx.operationId)
        ? {
            oneOf: [
              { $ref: '#/components/schemas/ValidationError' },
              { $ref: '#/components/schemas/IdempotencyKeyReusedError' },
            ],
          }
        : { $ref: '#/components/schemas/ValidationError' };
    case 429:
      return { $ref: '#/components/schemas/RateLimitError' };
    case 500:
      return { $ref: '#/components/schemas/InternalError' };
    default:
      return null;
  }
}

/** Named error components shared by every operation. */
export const ERROR_COMPONENTS: Record<string, Json> = {
  AuthenticationError: codes([...AUTH_ERRORS]),
  NotFoundError: codes(['not_found']),
  PayloadTooLargeError: codes(['payload_too_large']),
  UnsupportedMediaTypeError: codes(['unsupported_media_type']),
  ValidationError: codes(
    ['validation_failed'],
    {
      fieldErrors: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Field name (dotted path; `body` for the whole body) to message',
      },
    },
    ['fieldErrors'],
  ),
  RateLimitError: codes(['rate_limited'], { retryAfterSec: { type: 'integer', minimum: 1 } }, ['retryAfterSec']),
  InternalError: codes(['internal_error'], { requestId: { type: 'string' } }, ['requestId']),
  IdempotencyKeyReusedError: codes(
    ['idempotency_key_reused'],
    {
      fieldErrors: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Always names `Idempotency-Key`',
      },
    },
    ['fieldErrors'],
  ),
};
