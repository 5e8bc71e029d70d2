import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { REPLAYED_HEADER } from './idempotency.ts';

/**
 * CORS for browser integrators: any origin, no credentials (API keys travel in Authorization, never in cookies).
 * Answers carry Access-Control-Allow-Origin and the headers a page may read; a preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) is answered 204 at once, before authentication, since browsers send it without
 * the Authorization header; an OPTIONS without them is 400 (strict preflight).
 */
export const CORS_OPTIONS = {
  origin: '*',
  methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: [
    'Authorization',
    'Content-Type',
    'Idempotency-Key',
    'X-Service-Signature',
    'X-Service-Timestamp',
    'X-Service-Event',
    'X-Service-Test',
    'X-Legacy-Signature',
    'X-Legacy-Timestamp',
    'X-Legacy-Event',
  ],
  exposedHeaders: [
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'Retry-After',
    'X-Request-Id',
    REPLAYED_HEADER,
  ],
  maxAge: 86_400,
  strictPreflight: true,
  hideOptionsRoute: true,
} satisfies FastifyCorsOptions;

/**
 * Registers @fastify/cors (its OPTIONS route and request decorator) and returns its onRequest hook instead of
 * adding it, for the caller to run only on requests that can be CORS ones: those with an Origin, and every
 * OPTIONS (a malformed preflight gets its 400 from the plugin). A browser sends Origin with every cross-origin
 * request, so the rest (servers, curl, same-origin pages) skip the plugin's per-request work; see
 * docs/adr/0024-cors-hook-on-origin.md.
 */
export function registerCors(app: FastifyInstance): onRequestHookHandler {
  let hook: onRequestHookHandler | undefined;
  let failure: Error | undefined;
  // The plugin only decorates, adds its hook and its OPTIONS route, all synchronously; anything else fails here.
  const host = {
    decorateRequest: (name: string, value: unknown) => app.decorateRequest(name, value),
    options: (...args: unknown[]) => Reflect.apply(app.options, app, args) as unknown,
    addHook: (name: string, fn: onRequestHookHandler) => {
      if (name !== 'onRequest' || hook) throw new Error(`@fastify/cors added an unexpected ${name} hook`);
      hook = fn;
    },
  };
  (fastifyCors as unknown as (i: unknown, o: FastifyCorsOptions, next: (err?: Error) => void) => void)(
    host,
    CORS_OPTIONS,
    (err) => (failure = err),
  );
  if (failure || !hook) throw failure ?? new Error('@fastify/cors added no hook');
  return hook;
}

/** Whether a request needs the CORS hook: it comes from a browser page of another origin, or is an OPTIONS. */
export const needsCors = (request: FastifyRequest) =>
  request.headers.origin !== undefined || request.raw.method === 'OPTIONS';
