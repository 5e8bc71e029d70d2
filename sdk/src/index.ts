// The public surface of @fleet-ops/sdk.
export { FleetClient } from './client.js';
export type { ClientOptions, RequestOptions } from './options.js';
export type { ByteStream, UploadInput } from './uploads.js';
export { FleetApiError, FleetConnectionError, FleetError, FleetTimeoutError, parseRetryAfter } from './errors.js';
export {
  verifyWebhook,
  timingSafeEqual,
  WebhookVerificationError,
  type VerifyOptions,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from './webhooks.js';
export * from './generated/errors.js';
export * from './generated/events.js';
export * from './generated/operations.js';
export type * from './generated/schemas.js';
export type { components, operations, paths } from './generated/openapi.js';
