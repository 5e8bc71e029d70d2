import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { REPLAYED_HEADER } from './idempotency.ts';

/**
 * CORS for browser integrators: any origin, no credentials (API keys travel in Authorization, never in cookies).
 * Every answer carries Access-Control-Allow-Origin and the headers a page may read; a preflight (OPTIONS with
 * Origin and Access-Control-Request-Method) is answered 204 at once, before authentication, since browsers send
 * it without the Authorization header; an OPTIONS without them is 400. This is what @fastify/cors does with these
 * options, with the header values computed once instead of the options being merged on every request.
 */
export const CORS = {
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
  maxAgeSec: 86_400,
};

const EXPOSED = CORS.exposedHeaders.join(', ');
const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': CORS.methods.join(', '),
  'access-control-allow-headers': CORS.allowedHeaders.join(', '),
  'access-control-max-age': String(CORS.maxAgeSec),
};

/** Sets the CORS headers; answers a preflight and returns true when it did (the request ends there). */
export function applyCors(request: FastifyRequest, reply: FastifyReply): boolean {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED);
  if (request.raw.method !== 'OPTIONS') return false;
  if (!request.headers.origin || !request.headers['access-control-request-method']) {
    void reply.code(400).type('text/plain').send('Invalid Preflight Request');
    return true;
  }
  void reply.headers(PREFLIGHT_HEADERS).code(204).header('content-length', '0').send();
  return true;
}

/**
 * OPTIONS on any path, so a preflight is routed rather than 404; applyCors, in the first onRequest hook, has
 * answered it before this handler could run.
 */
export function registerPreflightRoute(app: FastifyInstance) {
  app.options('*', { schema: { hide: true } }, (_request, reply) => reply.code(204).send());
}
