import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Database } from '../db/database.ts';
import { ApiError, ValidationError } from '../core/errors.ts';
import {
  claimKey,
  completeKey,
  fingerprint,
  releaseKey,
  type IdempotencyScope,
  type StoredResponse,
} from './idempotency-store.ts';
import { addRouteHook } from './route-hooks.ts';

export const IDEMPOTENCY_KEY_MAX = 128;
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const JSON_TYPE = 'application/json; charset=utf-8';
const GUARDED = new Set(['POST', 'PATCH']);

interface Pending {
  scope: IdempotencyScope;
  fingerprint: string;
  method: string;
  path: string;
}

const PENDING = Symbol('idempotency');
type WithPending = FastifyRequest & { [PENDING]?: Pending };

export interface IdempotencyOptions {
  db: Database;
  /** How long a running claim is held: past it a retry may take over (its request can no longer commit). */
  leaseMs: number;
  /** Test seam: runs after a response was recorded and committed, before it is sent (a crash there). */
  afterCommit?: (request: FastifyRequest, reply: FastifyReply) => void;
}

/**
 * Idempotency-Key on every POST and PATCH under /api/v1 (but routes declaring `idempotency: 'own'`, i.e.
 * POST /hours with its seed semantics). The key is claimed in a statement of its own once the request passed
 * authentication, rate limit, scope and schema validation; the handler then runs in an ambient transaction
 * (every query of the request, including nested transactions, joins it) and its serialised response is
 * written to the record before COMMIT, so the change and its record commit together or not at all. The first
 * answer and every replay send those same stored bytes.
 */
export function registerIdempotency(api: FastifyInstance, options: IdempotencyOptions) {
  // A hook of the guarded routes only (added below): other routes never pay for it.
  const readKey = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined || !GUARDED.has(request.method) || !request.key) return done();
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX) {
      return done(new ValidationError({ 'Idempotency-Key': `must be 1-${IDEMPOTENCY_KEY_MAX} characters` }));
    }
    const path = request.url.split('?')[0];
    try {
      // The body as sent (before validation drops unknown fields or fills defaults), compared as canonical JSON.
      (request as WithPending)[PENDING] = {
        scope: { orgId: request.key.orgId, apiKeyId: request.key.keyId, key },
        fingerprint: fingerprint(request.method, path, request.query, request.body),
        method: request.method,
        path,
      };
    } catch (err) {
      return done(err as Error);
    }
    done();
  };

  api.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => GUARDED.has(m)) || route.config?.idempotency === 'own') return;
    // After the plugin's own preValidation hooks (the input guard of api-chain.ts), as when it was one of them.
    addRouteHook(route, 'preValidation', readKey);
    const handler = route.handler as RouteHandlerMethod;
    const outside = route.config?.idempotency === 'outside-transaction';
    route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const pending = (request as WithPending)[PENDING];
      if (!pending) return handler.call(this, request, reply);
      return guarded.call(this, handler, outside, pending, request, reply);
    } as RouteHandlerMethod;
  });

  function send(reply: FastifyReply, response: StoredResponse, replayed: boolean) {
    if (replayed) reply.header(REPLAYED_HEADER, 'true');
    return reply.code(response.status).type(JSON_TYPE).send(response.body);
  }

  async function guarded(
    this: FastifyInstance,
    handler: RouteHandlerMethod,
    outside: boolean,
    p: Pending,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    const { db } = options;
    const claim = await claimKey(db, p.scope, { ...p, leaseMs: options.leaseMs });
    if (claim.kind === 'replay') return send(reply, claim.response, true);
    if (claim.kind === 'reused') {
      // Every 422 of the API names its field (spec: 422 carries fieldErrors); here the field is the header.
      throw new ApiError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different method, path or body; use a new key',
        { fieldErrors: { 'Idempotency-Key': 'was already used with a different method, path or body' } },
      );
    }
    if (claim.kind === 'in_use') {
      reply.header('Retry-After', claim.retryAfterSec);
      throw new ApiError(
        409,
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds',
      );
    }
    const owner = claim.owner;
    const run = async (): Promise<StoredResponse> => {
      const recorder = recordingReply(reply);
      const returned = await handler.call(this, request, recorder.reply);
      const status = recorder.status ?? 200;
      const payload = (recorder.sent ? recorder.payload : returned) as Record<string, unknown>;
      const body = reply.serializeInput(payload, String(status)) as string;
      const response = { status, body };
      if (!(await completeKey(db, p.scope, owner, response))) throw new Error('idempotency claim lost before commit');
      return response;
    };
    let response: StoredResponse;
    try {
      response = outside ? await run() : await db.ambient(run);
    } catch (err) {
      // A 4xx the operation answered is its outcome (stored, replayed); anything else frees the key for a retry.
      if (err instanceof ApiError && err.statusCode >= 400 && err.statusCode < 500) {
        const stored = await storeOutcome(reply, p.scope, owner, err).catch((e: unknown) => {
          request.log.warn({ err: e }, 'idempotency: storing a 4xx outcome failed');
          return null;
        });
        if (stored) {
          options.afterCommit?.(request, reply);
          return send(reply, stored, false);
        }
      }
      await releaseKey(db, p.scope, owner).catch((e: unknown) => request.log.warn({ err: e }, 'idempotency release'));
      throw err;
    }
    options.afterCommit?.(request, reply);
    return send(reply, response, false);
  }

  /** Records a 4xx the operation answered; null when the claim was lost (then the key is released). */
  async function storeOutcome(reply: FastifyReply, scope: IdempotencyScope, owner: string, err: ApiError) {
    const body = { ok: false, error: err.code, message: err.message, ...err.extra };
    // A status the route does not declare has no serializer of its own: plain JSON, as the error handler sends.
    let text: string;
    try {
      text = reply.serializeInput(body, String(err.statusCode)) as string;
    } catch {
      text = JSON.stringify(body);
    }
    const stored = { status: err.statusCode, body: text };
    return (await completeKey(options.db, scope, owner, stored)) ? stored : null;
  }
}

/** A stand-in reply for the handler: records status and payload instead of sending (sent after the commit). */
function recordingReply(reply: FastifyReply) {
  const state = { status: undefined as number | undefined, payload: undefined as unknown, sent: false };
  const proxy: FastifyReply = new Proxy(reply, {
    get(target, prop) {
      if (prop === 'code' || prop === 'status')
        return (code: number) => {
          state.status = code;
          return proxy;
        };
      if (prop === 'send')
        return (payload: unknown) => {
          state.sent = true;
          state.payload = payload;
          return proxy;
        };
      if (prop === 'statusCode') return state.status ?? 200;
      // A Fastify reply is a thenable that settles once the answer is sent: the stand-in must not be one,
      // or awaiting the handler's `return reply.send(...)` would wait for an answer sent only after it.
      if (prop === 'then') return undefined;
      if (prop === 'sent') return state.sent;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    reply: proxy,
    get status() {
      return state.status;
    },
    get payload() {
      return state.payload;
    },
    get sent() {
      return state.sent;
    },
  };
}
