/** Settings of a FleetClient. Only `apiKey` is required. */
export interface ClientOptions {
  /** A Bearer API key (`flt_...`). */
  apiKey: string;
  /** Where the service runs, without `/api/v1`. Default `http://localhost:3000`. */
  baseUrl?: string;
  /** A fetch implementation (default: the global one). Wrap it to log, trace or proxy requests. */
  fetch?: typeof fetch;
  /** Time allowed for one attempt, response body included, in ms. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt (429, 5xx, network errors and timeouts). Default 2; 0 turns retries off. */
  maxRetries?: number;
  /** First backoff delay in ms, doubled per retry, jittered (a random half to all of it). Default 500. */
  retryBaseDelayMs?: number;
  /** Cap of one backoff delay in ms. Default 8 000. */
  retryMaxDelayMs?: number;
  /** A `Retry-After` longer than this (seconds) is not waited for: the error is thrown instead. Default 60. */
  maxRetryAfterSec?: number;
  /**
   * Send an `Idempotency-Key` (a random UUID, the same on every retry of one call) with each POST and PATCH,
   * so a retried write is applied once. Default true. With false, writes are retried only after a 429
   * (the server refused them before doing anything), never after a 5xx or a network error.
   */
  idempotencyKeys?: boolean;
  /** Extra headers sent with every request. Browsers: the API's CORS policy allows only its own headers. */
  headers?: Record<string, string>;
}

/** Per-call settings; each overrides the client's. */
export interface RequestOptions {
  /** Aborts the call, retries included. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  /** This call's Idempotency-Key (e.g. derived from your own record id), or false to send none. */
  idempotencyKey?: string | false;
  headers?: Record<string, string>;
}
