/** The one error model of the API: every failure becomes `{ ok:false, error, ... }` with a fitting status. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export type FieldErrors = Record<string, string>;

export class ValidationError extends ApiError {
  constructor(
    readonly fieldErrors: FieldErrors,
    message = 'The request is not valid; see fieldErrors.',
    extra: Record<string, unknown> = {},
  ) {
    super(422, 'validation_failed', message, { fieldErrors, ...extra });
  }
}

export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(409, code, message, extra);
export const badRequest = (code: string, message: string) => new ApiError(400, code, message);
export const fieldError = (field: string, message: string) => new ValidationError({ [field]: message });
