import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from './authenticator.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { Metrics } from '../metrics.ts';
import { ApiError, ValidationError } from '../core/errors.ts';
import { findInputProblem, textProblem } from '../core/input-guard.ts';
import type { PreAuthLimiter } from './pre-auth-limit.ts';

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

function setRateLimitHeaders(reply: FastifyReply, state: NonNullable<FastifyRequest['rateLimit']>) {
  reply.header('X-RateLimit-Limit', state.limit);
  reply.header('X-RateLimit-Remaining', state.remaining);
  reply.header('X-RateLimit-Reset', state.resetEpochSec);
}

/**
 * The request chain of /api/v1: authenticate the bearer key (401), count it against its rate limit
 * (429, headers on every authenticated response), check the route's scope (403 missing_scope:<scope>),
 * and refuse writes by keys whose issuing user was removed (403 key_creator_deleted).
 */
export function registerApiChain(
  api: FastifyInstance,
  auth: Authenticator,
  limiter: RateLimiter,
  metrics: Metrics,
  preAuth: PreAuthLimiter,
) {
  api.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    // Routes declare `scope` (null = any key) or `public`; the 404 handler declares neither.
    if (config.public || config.scope === undefined) return;
    let key;
    try {
      // Keys not in the authenticator's cache cost a database lookup: those are limited per client address.
      key = await auth.authenticate(request.headers.authorization, Date.now(), () => preAuth.take(request.ip));
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 429) {
        metrics.rateLimited();
        reply.header('Retry-After', err.extra.retryAfterSec);
      }
      throw err;
    }
    request.key = key;
    const state = await limiter.hit(key);
    request.rateLimit = state;
    setRateLimitHeaders(reply, state);
    if (state.limited) {
      metrics.rateLimited();
      const retryAfterSec = Math.max(1, state.resetEpochSec - Math.floor(Date.now() / 1000));
      reply.header('Retry-After', retryAfterSec);
      throw new ApiError(429, 'rate_limited', `Rate limit of ${state.limit} requests per minute exceeded`, {
        retryAfterSec,
      });
    }
    if (config.scope && !key.scopes.includes(config.scope)) {
      throw new ApiError(403, `missing_scope:${config.scope}`, `This API key lacks the ${config.scope} scope`);
    }
    if (WRITE_METHODS.has(request.method) && key.creator?.removed) {
      throw new ApiError(
        403,
        'key_creator_deleted',
        'The user who issued this API key has been removed; issue a new key',
      );
    }
  });

  // One check for every input instead of a 500 from the database wherever unstorable text reaches it.
  api.addHook('preValidation', async (request) => {
    const key = request.headers['idempotency-key'];
    const keyProblem = typeof key === 'string' ? textProblem(key) : null;
    const problem =
      findInputProblem(request.params, '') ??
      findInputProblem(request.query, '') ??
      findInputProblem(request.body, '') ??
      (keyProblem ? (['Idempotency-Key', keyProblem] as [string, string]) : null);
    if (problem) throw new ValidationError({ [problem[0]]: problem[1] });
  });
}
