import { errorCodes, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  currentRequestScope,
  expireRequestScope,
  newRequestScope,
  runInRequestScope,
  type RequestScope,
} from '../db/request-scope.ts';

/** A request in flight, in the order they arrived (every request has the same timeout, so also by deadline). */
interface Entry {
  request: FastifyRequest;
  reply: FastifyReply;
  scope: RequestScope;
  deadline: number;
  prev: Entry | null;
  next: Entry | null;
}

const ENTRY = Symbol('deadline');
type WithEntry = FastifyRequest & { [ENTRY]?: Entry };

/**
 * The deadline of the whole request (REQUEST_TIMEOUT_MS: hooks, body, handler, serialising): past it the request
 * is answered 503 request_timeout and its database work is cut off (the connections it is using are reset and
 * its further queries refused, see request-scope.ts), so a request answered with an error can never commit
 * afterwards. The scope is entered again in preValidation because body parsing runs in the socket's context.
 *
 * Fastify's own handlerTimeout would do the answering with an AbortController, a timer and a 'close' listener per
 * request; here every request sits in one list in arrival order (all share the timeout, so the oldest expires
 * first) under one timer armed for the oldest: a request costs two pointer updates. As with handlerTimeout, a
 * request whose client has gone away is left alone (nobody is waiting for the 503).
 */
export function registerRequestDeadline(app: FastifyInstance, timeoutMs: number) {
  let head: Entry | null = null;
  let tail: Entry | null = null;
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;

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

  function expire({ request, reply, scope }: Entry) {
    if (reply.sent || request.raw.socket?.destroyed) return;
    expireRequestScope(scope);
    const err = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, request.routeOptions.url ?? request.url);
    // A response already on its way (a stream) cannot become a 503: end it, as Fastify's handlerTimeout does.
    if (reply.raw.headersSent) reply.raw.destroy(err);
    else reply.send(err);
  }

  app.addHook('onRequest', (request, reply, done) => {
    const scope = newRequestScope();
    const e: Entry = { request, reply, scope, deadline: performance.now() + timeoutMs, prev: tail, next: null };
    if (tail) tail.next = e;
    else head = e;
    tail = e;
    (request as WithEntry)[ENTRY] = e;
    arm();
    runInRequestScope(scope, done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const e = (request as WithEntry)[ENTRY];
    // A request without a body is still in the scope entered at onRequest: entering it again would cost a context.
    if (e && currentRequestScope() !== e.scope) runInRequestScope(e.scope, done);
    else done();
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
