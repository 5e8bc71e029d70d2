import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
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

/** Registers @fastify/cors with the contract's options; its onRequest hook runs on every request. */
export async function registerCors(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCors, CORS_OPTIONS);
}
