import type { FastifyInstance, RouteOptions } from 'fastify';
import { ErrorResponse } from './schemas.ts';

type Schema = NonNullable<RouteOptions['schema']> & { response?: Record<string, unknown>; security?: unknown };

/**
 * Completes every /api/v1 route's contract from what it declares: the security requirement, its scope
 * in the description, and the error responses the chain can produce (so they are serialized and
 * documented like any other response). Refuses to start if a route lacks an operationId or an auth
 * declaration, so no route can be added unprotected or undocumented by accident.
 */
export function registerRouteDocs(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1') || route.method === 'HEAD' || route.method === 'OPTIONS') return;
    const schema = (route.schema ??= {}) as Schema;
    const config = (route.config ?? {}) as { scope?: string | null; public?: boolean };
    const where = `${String(route.method)} ${route.url}`;
    if (!schema.operationId) throw new Error(`${where} has no operationId`);
    if (!config.public && config.scope === undefined) throw new Error(`${where} declares neither a scope nor public`);
    const response = (schema.response ??= {});
    const add = (status: number, description: string) => {
      response[status] ??= ErrorResponse.describe(description);
    };
    // Fastify parses a body sent with DELETE too, so it can meet the same 400/413/415.
    const hasBody = ['POST', 'PATCH', 'PUT', 'DELETE'].includes(String(route.method));
    if (!config.public) {
      schema.security = [{ bearerAuth: [] }];
      schema.description = [schema.description, config.scope ? `Scope: \`${config.scope}\`.` : 'Any valid API key.']
        .filter(Boolean)
        .join('\n\n');
      add(401, 'Authentication failed: missing_bearer, malformed_token, unknown_token, revoked or expired');
      add(403, 'missing_scope:<scope>, or key_creator_deleted on writes');
      add(429, 'Rate limit exceeded, per key or (authentication lookups) per client address: rate_limited, retryAfterSec, Retry-After header');
    }
    if (route.url.includes(':')) add(404, 'Not found in this organisation');
    if (hasBody) {
      add(400, 'Body is not valid JSON (invalid_json) or batch envelope invalid');
      add(413, 'Body larger than 1 MiB (payload_too_large)');
      add(415, 'Body is not application/json (unsupported_media_type)');
    }
    // Any authenticated input (path, query, body, Idempotency-Key) can fail validation, e.g. a NUL character.
    if (hasBody || schema.querystring || !config.public) add(422, 'Validation failed; fieldErrors maps field to message');
    add(500, 'Internal error; quote requestId');
    add(503, 'database_unavailable, request_timeout or shutting_down; retry after the Retry-After header (seconds)');
  });
}
