import type { FleetErrorCode } from './generated/errors.js';

/** Base class of every error the client throws. */
export class FleetError extends Error {
  override name = 'FleetError';
}

/** The API answered with an error status; the fields come from its error envelope and headers. */
export class FleetApiError extends FleetError {
  override name = 'FleetApiError';
  /** HTTP status. */
  readonly status: number;
  /** Machine-readable code (`validation_failed`, `not_found`, `missing_scope:assets:write`...). */
  readonly code: FleetErrorCode;
  /** Field (dotted path) to message, on 422 and failed batch entries. */
  readonly fieldErrors: Record<string, string> | undefined;
  /** The request id the server logged (X-Request-Id), for support requests. */
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again (429, 409 idempotency_key_in_use, 503). */
  readonly retryAfterSec: number | undefined;
  /** The parsed error body as received. */
  readonly body: unknown;
  readonly headers: Headers;

  constructor(status: number, body: unknown, headers: Headers) {
    const envelope = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const code = typeof envelope.error === 'string' ? envelope.error : `http_${status}`;
    const message = typeof envelope.message === 'string' ? envelope.message : `HTTP ${status}`;
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.body = body;
    this.headers = headers;
    this.fieldErrors =
      envelope.fieldErrors && typeof envelope.fieldErrors === 'object'
        ? (envelope.fieldErrors as Record<string, string>)
        : undefined;
    this.requestId =
      headers.get('x-request-id') ?? (typeof envelope.requestId === 'string' ? envelope.requestId : undefined);
    this.retryAfterSec =
      parseRetryAfter(headers.get('retry-after')) ??
      (typeof envelope.retryAfterSec === 'number' ? envelope.retryAfterSec : undefined);
  }
}

/** No answer: the connection failed or was cut. `cause` holds what fetch threw. */
export class FleetConnectionError extends FleetError {
  override name = 'FleetConnectionError';
}

/** No answer within the timeout. */
export class FleetTimeoutError extends FleetConnectionError {
  override name = 'FleetTimeoutError';
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
