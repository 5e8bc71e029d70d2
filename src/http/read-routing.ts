import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Database } from '../db/database.ts';
import { outsideAmbient } from '../db/ambient.ts';
import { newReadScope, outsideReadScope, runInReadScope, type ReadScope } from '../db/read-scope.ts';
import { WRITE_METHODS } from './route-hooks.ts';

const READ_SCOPE = Symbol('readScope');
type WithScope = FastifyRequest & { [READ_SCOPE]?: ReadScope };

/**
 * With read replicas (DATABASE_REPLICA_URLS): the handler of every GET of `api` runs in a read scope, whose
 * statements outside a transaction may go to a replica that has replayed the organisation's last write; the
 * authentication before it (API-key lookups) stays on the primary. Every answer to a request that can change data
 * first records the organisation's write position, so that no later read of it, through any API process, is
 * older (docs/adr/0070-read-replicas.md). Without replicas nothing is added.
 */
export function registerReadRouting(api: FastifyInstance, db: Database) {
  const replicas = db.replicas;
  if (!replicas) return;
  api.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.every((m) => m === 'GET' || m === 'HEAD')) return;
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const orgId = request.key?.orgId;
      if (!orgId) return handler.call(this, request, reply);
      const scope = ((request as WithScope)[READ_SCOPE] = newReadScope(orgId));
      return runInReadScope(scope, () => handler.call(this, request, reply));
    } as RouteHandlerMethod;
  });
  api.addHook('onSend', async (request, _reply, payload) => {
    const orgId = request.key?.orgId;
    const wrote = WRITE_METHODS.has(request.method) || (request as WithScope)[READ_SCOPE]?.wrote;
    if (!orgId || !wrote) return payload;
    try {
      await outsideAmbient(() => outsideReadScope(() => replicas.noteWrite(orgId)));
    } catch (err) {
      // The primary did not answer: the write most likely failed with it; reads go on by the replicas' positions.
      request.log.warn({ err }, 'read replicas: could not record the write position');
    }
    return payload;
  });
}
