import type { FastifyInstance, FastifyRequest } from 'fastify';
import { expireRequestScope, newRequestScope, runInRequestScope, type RequestScope } from '../db/request-scope.ts';

const SCOPE = Symbol('dbScope');
type WithScope = FastifyRequest & { [SCOPE]?: RequestScope };

/**
 * Binds each request's database work to the request. When Fastify's handlerTimeout fires it aborts
 * request.signal just before sending the 503; we then reset the connections the request is using and
 * refuse its further queries, so a request answered with an error can never commit afterwards.
 * The scope is entered again in preValidation because body parsing runs in the socket's async context.
 */
export function registerRequestDeadline(app: FastifyInstance) {
  app.addHook('onRequest', (request, _reply, done) => {
    const scope = newRequestScope();
    (request as WithScope)[SCOPE] = scope;
    // request.signal also aborts when the connection closes; only the deadline expires the work.
    request.signal?.addEventListener(
      'abort',
      () => {
        if ((request.signal.reason as { code?: string })?.code === 'FST_ERR_HANDLER_TIMEOUT') expireRequestScope(scope);
      },
      { once: true },
    );
    runInRequestScope(scope, done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const scope = (request as WithScope)[SCOPE];
    if (scope) runInRequestScope(scope, done);
    else done();
  });
}
