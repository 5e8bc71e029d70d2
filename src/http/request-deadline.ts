import {
  errorCodes,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RouteHandlerMethod,
} from 'fastify';
import { expireRequestScope, newRequestScope, runInRequestScope, type RequestScope } from '../db/request-scope.ts';
import { WRITE_METHODS } from './route-hooks.ts';

/** A request in flight, in the order they arrived (every request has the same timeout, so also by deadline). */
interface Entry {
  request: FastifyRequest;
  reply: FastifyReply;
  /** Set once the handler of a request that can change data starts (registerWriteScopes). */
  scope: RequestScope | null;
  expired: boolean;
  deadline: number;
  prev: Entry | null;
  next: Entry | null;
}

const ENTRY = Symbol('deadline');
type WithEntry = FastifyRequest & { [ENTRY]?: Entry };

/**
 * The deadline of the whole request (REQUEST_TIMEOUT_MS: hooks, body, handler, serialising): past it the request
 * is answered 503 request_timeout and, for a request that can change data, its database work is cut off (the
 * connections it is using are reset and its further queries refused, see request-scope.ts), so a request
 * answered with an error can never commit afterwards. A read has nothing to commit: its statements are bounded
 * by the database timeouts, and it runs without a scope (no async context to track, see lazy-context.ts).
 *
 * Not Fastify's handlerTimeout (a timer, an AbortController and a 'close' listener per request): every request
 * sits in one list in arrival order (all share the timeout, so the oldest expires first) under one timer armed
 * for the oldest, two pointer updates per request; docs/adr/0026-request-deadline-and-fastify.md. As with
 * handlerTimeout, a request whose client has gone away is left alone (nobody is waiting for the 503).
 */
export function registerRequestDeadline(app: FastifyInstance, timeoutMs: number) {
  let head: Entry | null = null;
  let tail: Entry | null = null;
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;
  // Declared, so every request object is made with the field rather than growing it in the hook (a shape change
  // per request).
  app.decorateRequest(ENTRY as never, null as never);

  const unlink = (e: Entry) => {
    if (e.prev) e.prev.next = e.next;
    else head = e.next;
    if (e.next) e.next.prev = e.prev;
    else tail = e.prev;
    e.prev = e.next = null;
  };

  const arm = () => {
    if (!head || head.deadline >= armedFor) return;
    if (timer) clearTimeout(timer);
    armedFor = head.deadline;
    timer = setTimeout(tick, Math.max(0, armedFor - performance.now()));
    timer.unref();
  };

  function tick() {
    timer = null;
    armedFor = Infinity;
    const now = performance.now();
    while (head && head.deadline <= now) {
      const e = head;
      unlink(e);
      expire(e);
    }
    arm();
  }

  function expire(e: Entry) {
    const { request, reply, scope } = e;
    if (reply.sent || request.raw.socket?.destroyed) return;
    e.expired = true;
    if (scope) expireRequestScope(scope);
    const err = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, request.routeOptions.url ?? request.url);
    // A response already on its way (a stream) cannot become a 503: end it, as Fastify's handlerTimeout does.
    if (reply.raw.headersSent) reply.raw.destroy(err);
    else reply.send(err);
  }

  app.addHook('onRequest', (request, reply, done) => {
    const e: Entry = {
      request,
      reply,
      scope: null,
      expired: false,
      deadline: performance.now() + timeoutMs,
      prev: tail,
      next: null,
    };
    if (tail) tail.next = e;
    else head = e;
    tail = e;
    (request as WithEntry)[ENTRY] = e;
    arm();
    done();
  });
  // A request whose client left before its answer stays listed until its deadline, then is dropped unanswered:
  // watching every socket for that ('close' listeners) would cost each request more than it saves.
  app.addHook('onResponse', (request, _reply, done) => {
    const e = (request as WithEntry)[ENTRY];
    if (e && (e.prev || head === e)) unlink(e);
    done();
  });
  app.addHook('onClose', (_app, done) => {
    if (timer) clearTimeout(timer);
    done();
  });
}

/**
 * Runs the handler of every route of `api` that can change data in its request's scope, so its database work is
 * cut off at the deadline. Register it after every other onRoute hook that wraps handlers (idempotency): the scope
 * must hold the whole of the handler, the idempotency claim and its transaction included.
 */
export function registerWriteScopes(api: FastifyInstance) {
  api.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => WRITE_METHODS.has(m))) return;
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const e = (request as WithEntry)[ENTRY];
      const scope = newRequestScope();
      if (e) {
        e.scope = scope;
        scope.expired = e.expired;
      }
      return runInRequestScope(scope, () => handler.call(this, request, reply));
    } as RouteHandlerMethod;
  });
}
