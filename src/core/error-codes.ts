/**
 * Every `error` code the API answers, with the statuses it comes with and what it means. ApiError and errorBody
 * accept only these (a new code does not compile until it is here), and docs/reference/errors.md is generated
 * from this table (`npm run docs`; docs/adr/0050-error-codes-and-reference-pages-from-code.md). Clients must treat a
 * code they do not know like its status's generic meaning.
 */
import { SHOP_ERROR_CODES } from './error-codes-shop.ts';

export interface ErrorCodeInfo {
  status: readonly number[];
  meaning: string;
}

export const ERROR_CODES = {
  // 400
  invalid_json: { status: [400], meaning: 'The request body is not valid JSON.' },
  bad_request: {
    status: [400],
    meaning:
      'The request is not valid HTTP, or the HTTP layer refused it (e.g. a bad `Content-Length`; then with ' +
      'that 4xx status).',
  },
  bad_url: { status: [400], meaning: 'A path parameter has a malformed percent-encoding.' },
  invalid_envelope: {
    status: [400],
    meaning: 'A batch body is not `{"items": [...]}`; the whole batch is refused and nothing is written.',
  },
  empty_batch: { status: [400], meaning: 'A batch holds no items.' },
  batch_too_large: { status: [400], meaning: 'A batch holds more items than the limit the operation states.' },
  duplicate_code: { status: [400], meaning: 'Another project of the organisation already has this code.' },
  upload_interrupted: {
    status: [400],
    meaning: 'The upload ended before the file was complete (the connection closed or the body was cut).',
  },
  // 401
  missing_bearer: { status: [401], meaning: 'No `Authorization: Bearer <API key>` header was sent.' },
  malformed_token: { status: [401], meaning: 'The bearer token is not an API key of this service.' },
  unknown_token: { status: [401], meaning: 'The API key is not known (never issued, or mistyped).' },
  revoked: { status: [401], meaning: 'The API key has been revoked.' },
  expired: { status: [401], meaning: 'The API key has expired.' },
  unauthorized: {
    status: [401],
    meaning: '`GET /metrics` without the `Authorization: Bearer <METRICS_TOKEN>` it is configured with.',
  },
  // 403
  'missing_scope:<scope>': {
    status: [403],
    meaning:
      'The API key lacks the scope named after the colon (e.g. `missing_scope:assets:write`); ' +
      'see [Scopes](scopes.md).',
  },
  key_creator_deleted: {
    status: [403],
    meaning: 'The person who issued this API key has been removed: it can still read, but not write.',
  },
  scope_escalation: { status: [403], meaning: 'A key cannot issue a key with scopes it does not hold itself.' },
  rate_limit_escalation: {
    status: [403],
    meaning: 'A key cannot issue a key with a higher rate limit than its own.',
  },
  expiry_escalation: {
    status: [403],
    meaning: 'A key cannot issue a key that outlives its own expiry.',
  },
  invalid_upload_token: { status: [403], meaning: 'The presigned upload URL is not valid (wrong or altered token).' },
  // 404
  not_found: {
    status: [404],
    meaning: 'No such resource in the organisation of the key (or no such route); other organisations look the same.',
  },
  thumbnail_unavailable: { status: [404], meaning: 'No thumbnail can be made of this attachment.' },
  // 409
  idempotency_key_in_use: {
    status: [409],
    meaning: 'A request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds.',
  },
  asset_checked_out: {
    status: [409],
    meaning: 'The asset is checked out to someone else; send `force: true` to take it over.',
  },
  asset_unavailable: {
    status: [409],
    meaning: 'The asset is SOLD or ARCHIVED: it cannot be checked out and takes no inspections.',
  },
  tool_checked_out: {
    status: [409],
    meaning: 'The tool is checked out to someone else; send `force: true` to take it over.',
  },
  tool_unavailable: { status: [409], meaning: 'The tool cannot be checked out in its current status.' },
  not_consumable: { status: [409], meaning: 'Stock can only be adjusted on a consumable tool.' },
  flag_already_resolved: { status: [409], meaning: 'The flag is already resolved.' },
  invalid_status_transition: {
    status: [409],
    meaning:
      'The work order or purchase order cannot move to that status from its current one, or cannot be changed in it.',
  },
  not_pending_review: { status: [409], meaning: 'The meter log is not awaiting review.' },
  service_task_in_use: {
    status: [409],
    meaning: 'The service task is used by service programs or reminders and cannot be deleted.',
  },
  inspection_already_reviewed: { status: [409], meaning: 'The inspection has already been reviewed.' },
  inspection_defects_open: {
    status: [409],
    meaning: 'The review certifies the defects corrected while flags this inspection opened are still open.',
  },
  inspection_form_archived: { status: [409], meaning: 'The inspection form is archived: it takes no new versions.' },
  cannot_remove_key_creator: {
    status: [409],
    meaning: 'The calling API key was issued by this person: remove them with another key.',
  },
  key_revoked: { status: [409], meaning: 'The API key is revoked and cannot be rolled.' },
  key_expired: { status: [409], meaning: 'The API key has expired and cannot be rolled.' },
  key_already_rolled: { status: [409], meaning: 'The API key was already rolled: roll its successor instead.' },
  webhook_inactive: {
    status: [409],
    meaning: 'The webhook subscription is paused or disabled: re-enable it (PATCH `active: true`) first.',
  },
  webhook_secret_unavailable: {
    status: [409],
    meaning: "The subscription's signing secret cannot be decrypted with the server's keys.",
  },
  upload_incomplete: { status: [409], meaning: 'The attachment has not been uploaded yet.' },
  upload_already_used: { status: [409], meaning: 'The presigned upload URL was already used.' },
  // 410
  upload_expired: { status: [410], meaning: 'The presigned upload URL has expired: ask for a new one.' },
  // 413
  payload_too_large: { status: [413], meaning: 'The request body is larger than the server accepts.' },
  file_too_large: { status: [413], meaning: 'The file is larger than the attachment size limit or its declared size.' },
  quota_exceeded: { status: [413], meaning: "The organisation's attachment storage quota would be exceeded." },
  // 415
  unsupported_media_type: {
    status: [415],
    meaning: 'The body is not `application/json` (or, for an attachment, a file type that is not accepted).',
  },
  // 422
  validation_failed: { status: [422], meaning: 'The request is not valid: `fieldErrors` names each field and why.' },
  idempotency_key_reused: {
    status: [422],
    meaning: 'This `Idempotency-Key` was already used with another method, path or body: use a new key.',
  },
  // 429 and 431
  rate_limited: { status: [429], meaning: 'Too many requests: retry after `retryAfterSec` (and `Retry-After`).' },
  headers_too_large: { status: [431], meaning: 'The request headers are too large.' },
  // 5xx
  internal_error: {
    status: [500],
    meaning: 'Something went wrong on the server; quote `requestId` when reporting it.',
  },
  request_timeout: {
    status: [408, 503],
    meaning:
      '408: the request did not arrive in time. 503: it took too long and was abandoned, nothing was saved ' +
      '(retry after `Retry-After`).',
  },
  database_unavailable: {
    status: [503],
    meaning: 'The database is unavailable; nothing was saved. Retry after `Retry-After`.',
  },
  storage_unavailable: { status: [503], meaning: 'Attachment storage cannot be reached; retry later.' },
  shutting_down: { status: [503], meaning: 'The server is shutting down; retry shortly (another replica answers).' },
  ...SHOP_ERROR_CODES,
} as const satisfies Record<string, ErrorCodeInfo>;

type Table = typeof ERROR_CODES;
/** A code the API answers; `missing_scope:` is followed by the scope the key lacks. */
export type ErrorCode = Exclude<keyof Table, 'missing_scope:<scope>'> | `missing_scope:${string}`;
/** The statuses `code` may come with. */
export type ErrorStatus<C extends ErrorCode> = C extends keyof Table ? Table[C]['status'][number] : 403;

/** The table's entry for `code` (`missing_scope:<scope>` for every missing scope); undefined for a stranger. */
export function errorCodeInfo(code: string): ErrorCodeInfo | undefined {
  const key = code.startsWith('missing_scope:') ? 'missing_scope:<scope>' : code;
  return Object.hasOwn(ERROR_CODES, key) ? ERROR_CODES[key as keyof Table] : undefined;
}
