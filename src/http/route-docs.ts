import type { FastifyInstance, RouteOptions } from 'fastify';
import { z } from 'zod';
import { ErrorResponse } from '../core/schemas.ts';

/** The Idempotency-Key request header of every POST and PATCH (but POST /hours, which declares its own). */
const IdempotencyKeyHeader = z.looseObject({
  'idempotency-key': z
    .string()
    .meta({ minLength: 1, maxLength: 128 })
    .optional()
    .describe(
      'Opaque key (a UUID is best) making the request safe to retry for 24 hours: a repeat with the same method, ' +
        'path and body returns the first response with Idempotent-Replayed: true and changes nothing',
    ),
});

type Schema = NonNullable<RouteOptions['schema']> & { response?: Record<string, unknown>; security?: unknown };

/**
 * Completes every /api/v1 route's contract from what it declares: the security requirement (the scope is
 * the requirement's role, so tools can read it; public routes `security: []`), and the error responses the
 * chain can produce (so they are serialized and documented like any other response). Refuses to start if
 * a route lacks an operationId or an auth declaration, so no route can be added unprotected by accident.
 * The error codes of each status are published by the contract generator (src/contracts/errors.ts).
 */
export function registerRouteDocs(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1') || route.method === 'HEAD' || route.method === 'OPTIONS') return;
    const schema = (route.schema ??= {}) as Schema;
    const config = (route.config ?? {}) as {
      scope?: string | null;
      subjectScopes?: Readonly<Record<string, string>>;
      public?: boolean;
      idempotency?: string;
    };
    const where = `${String(route.method)} ${route.url}`;
    if (!schema.operationId) throw new Error(`${where} has no operationId`);
    if (!config.public && config.scope === undefined) throw new Error(`${where} declares neither a scope nor public`);
    const response = (schema.response ??= {});
    const add = (status: number, description: string) => {
      response[status] ??= ErrorResponse.describe(description);
    };
    // Fastify parses a body sent with DELETE too, so it can meet the same 400/413/415.
    const hasBody = ['POST', 'PATCH', 'PUT', 'DELETE'].includes(String(route.method));
    if (config.public) {
      schema.security = [];
    } else {
      const subjectScopes = [...new Set(Object.values(config.subjectScopes ?? {}))];
      // One alternative per scope the record's type may need (with the route's own scope, which every request
      // needs); the record's type says which applies.
      schema.security = subjectScopes.length
        ? subjectScopes.map((scope) => ({ bearerAuth: config.scope ? [config.scope, scope] : [scope] }))
        : [{ bearerAuth: config.scope ? [config.scope] : [] }];
      const scopeNote = subjectScopes.length
        ? subjectScopesNote(config.scope ?? null, config.subjectScopes!)
        : config.scope
          ? `Scope: \`${config.scope}\`.`
          : 'Any valid API key.';
      schema.description = [schema.description, scopeNote].filter(Boolean).join('\n\n');
      add(
        401,
        'Authentication failed: the Authorization header is missing, malformed, or the key is unknown, revoked or expired',
      );
      const write = hasBody || route.method === 'DELETE';
      if (config.scope)
        add(
          403,
          `The key lacks the \`${config.scope}\` scope${write ? ', or the user who issued it was removed' : ''}`,
        );
      else if (write) add(403, 'The user who issued the key was removed');
      add(
        429,
        'Rate limit exceeded, per key or (authentication lookups) per client address; retry after `retryAfterSec` seconds (also in Retry-After)',
      );
    }
    if (route.url.includes(':')) add(404, 'Not found in this organisation');
    if (['POST', 'PATCH'].includes(String(route.method)) && !config.public && config.idempotency !== 'own') {
      const inUse =
        'idempotency_key_in_use: a request with this Idempotency-Key is still running; retry after Retry-After seconds';
      // A route's own 409 keeps its schema (it may carry fields such as checkedOutToUserId); only its text grows.
      const own = response[409] as z.ZodType | undefined;
      response[409] = own
        ? own.describe(`${own.description ?? 'Conflict'}; or ${inUse}`)
        : ErrorResponse.describe(inUse);
      schema.headers ??= IdempotencyKeyHeader;
    }
    // A malformed percent-encoding can only break a path parameter; it is refused (400 bad_url) before routing.
    const hasParams = route.url.includes(':');
    if (hasBody || hasParams) {
      add(
        400,
        [hasBody && 'the body is not valid JSON or not a valid batch envelope', hasParams && 'the URL is malformed']
          .filter(Boolean)
          .join(', or ')
          .replace(/^./, (c) => c.toUpperCase()),
      );
    }
    if (hasBody) {
      add(413, 'Body larger than 1 MiB');
      add(415, 'Body is not application/json');
    }
    // Any authenticated input (path, query, body, Idempotency-Key) can fail validation, e.g. a NUL character.
    if (hasBody || schema.querystring || !config.public)
      add(
        422,
        'Validation failed; fieldErrors maps each field to a message' +
          (schema.headers === IdempotencyKeyHeader
            ? '; or idempotency_key_reused: this Idempotency-Key was used with another method, path or body'
            : ''),
      );
    add(500, 'Internal error; quote requestId when reporting it');
    add(503, 'database_unavailable, request_timeout or shutting_down; retry after the Retry-After header (seconds)');
  });
}

/**
 * "Scope: by the subject's type: `assets:read` (asset), `workorders:read` (work_order, repair), ...", or with a
 * route scope "Scope: `imports:write`, and by the type: `assets:write` (assets), ...".
 */
function subjectScopesNote(scope: string | null, byType: Readonly<Record<string, string>>): string {
  const types = new Map<string, string[]>();
  for (const [type, typeScope] of Object.entries(byType)) types.set(typeScope, [...(types.get(typeScope) ?? []), type]);
  const list = [...types].map(([typeScope, of]) => `\`${typeScope}\` (${of.join(', ')})`).join(', ');
  return scope ? `Scope: \`${scope}\`, and by the type: ${list}.` : `Scope: by the subject's type: ${list}.`;
}
