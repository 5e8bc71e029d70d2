import type { ErrorCode, ErrorStatus } from './error-codes.ts';

export type { ErrorCode } from './error-codes.ts';

/**
 * The one error model of the API: every failure becomes `{ ok:false, error, ... }` with a fitting status. The
 * code must be one of src/core/error-codes.ts, with a status listed there.
 */
export class ApiError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly statusCode: ErrorStatus<C>,
    readonly code: C,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** An error body sent without an ApiError (answers made before or outside a route's handler). */
export const errorBody = <C extends ErrorCode>(code: C, message: string, extra: Record<string, unknown> = {}) => ({
  ok: false as const,
  error: code,
  message,
  ...extra,
});

export type FieldErrors = Record<string, string>;

export class ValidationError extends ApiError<'validation_failed'> {
  constructor(
    readonly fieldErrors: FieldErrors,
    message = 'The request is not valid; see fieldErrors.',
    extra: Record<string, unknown> = {},
  ) {
    super(422, 'validation_failed', message, { fieldErrors, ...extra });
  }
}

/** Codes that come with `status`. */
export type CodeOf<S extends number> = { [C in ErrorCode]: S extends ErrorStatus<C> ? C : never }[ErrorCode];

export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (code: CodeOf<409>, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(409, code, message, extra);
export const badRequest = (code: CodeOf<400>, message: string) => new ApiError(400, code, message);
export const fieldError = (field: string, message: string) => new ValidationError({ [field]: message });
