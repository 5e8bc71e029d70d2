import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from './authenticator.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { Metrics } from '../metrics.ts';
import type { AuthenticatedKey, RateLimitState, Scope } from '../core/context.ts';
import { ApiError, ValidationError } from '../core/errors.ts';
import { findInputProblem, textProblem } from '../core/input-guard.ts';
import type { PreAuthLimiter } from './pre-auth-limit.ts';
import { addRouteHook, WRITE_METHODS } from './route-hooks.ts';

/** What the chain checks for one route, fixed when the route is added. */
interface RouteRule {
  scope: Scope | null;
  /** Refused to keys whose issuing user was removed; null: depends on the method (a route of several). */
  write: boolean | null;
}

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
  /** Rate limit, scope and creator checks once the key is known; throws the 429 or 403. */
  function admit(reply: FastifyReply, route: RouteRule, key: AuthenticatedKey, state: RateLimitState) {
    const request = reply.request;
    request.key = key;
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
    const scope = route.scope;
    if (scope && !key.scopes.includes(scope)) {
      throw new ApiError(403, `missing_scope:${scope}`, `This API key lacks the ${scope} scope`);
    }
    if ((route.write ?? WRITE_METHODS.has(request.method)) && key.creator?.removed) {
      throw new ApiError(
        403,
        'key_creator_deleted',
        'The user who issued this API key has been removed; issue a new key',
      );
    }
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply, route: RouteRule, nowMs: number) {
    let key;
    try {
      // Lookups that find no usable key are what a flood of made-up keys costs: limited per client address.
      key = await auth.authenticate(request.headers.authorization, nowMs, preAuth.guard(request.ip));
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 429) {
        metrics.rateLimited();
        reply.header('Retry-After', err.extra.retryAfterSec);
      }
      throw err;
    }
    admit(reply, route, key, await limiter.hit(key, nowMs));
  }

  const chain = (route: RouteRule) => (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const nowMs = Date.now();
    // The common case (a cached key, the in-process counter) completes here, without a promise in sight.
    let key: AuthenticatedKey | undefined;
    let state: RateLimitState | undefined;
    try {
      key = auth.cachedKey(request.headers.authorization, nowMs);
      state = key && limiter.hitNow(key, nowMs);
      if (key && state) admit(reply, route, key, state);
    } catch (err) {
      return done(err as Error);
    }
    if (key && state) return done();
    // hitNow counted nothing when it returned undefined, so the slow path counts the request once.
    authenticate(request, reply, route, nowMs).then(() => done(), done);
  };

  // Each route gets the chain with what it declares: `scope` (null = any key) or `public` (no chain). The 404
  // handler declares neither and gets none. Ahead of the route's own onRequest hooks.
  api.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as { public?: boolean; scope?: Scope | null };
    if (config.public || config.scope === undefined) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const rule: RouteRule = { scope: config.scope, write: methods.length === 1 ? WRITE_METHODS.has(methods[0]) : null };
    addRouteHook(route, 'onRequest', chain(rule), 'first');
  });

  // One check for every input instead of a 500 from the database wherever unstorable text reaches it.
  api.addHook('preValidation', (request, _reply, done) => {
    const key = request.headers['idempotency-key'];
    const keyProblem = typeof key === 'string' ? textProblem(key) : null;
    const problem =
      findInputProblem(request.params, '') ??
      findInputProblem(request.query, '') ??
      findInputProblem(request.body, '') ??
      (keyProblem ? (['Idempotency-Key', keyProblem] as [string, string]) : null);
    done(problem ? new ValidationError({ [problem[0]]: problem[1] }) : undefined);
  });
}
