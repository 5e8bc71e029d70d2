import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyReply } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppDeps } from './composition.ts';
import { registerApiChain } from './http/api-chain.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { registerCors } from './http/cors.ts';
import {
  clientErrorHandler,
  registerErrorHandling,
  registerJsonParser,
  registerShutdownRefusal,
} from './http/error-handler.ts';
import { registerRequestDeadline, registerWriteScopes } from './http/request-deadline.ts';
import { registerReadRouting } from './http/read-routing.ts';
import { createPreAuthLimiter } from './http/pre-auth-limit.ts';
import { registerRouteDocs } from './http/route-docs.ts';
import { createSerializerCompiler } from './http/response-serializer.ts';
import { API_MODULES, PUBLIC_MODULES } from './modules/index.ts';
import { recordRoutes, ROUTER_OPTIONS } from './contracts/route-table.ts';
import { lazyChildLoggerFactory } from './logger.ts';
import { AccessLogController } from './http/access-log.ts';
import './core/zod-messages.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the HTTP application without listening; main.ts and the tests both use it. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const serializerCompiler = createSerializerCompiler({ verify: deps.testHooks.verifySerializers });
  const app = Fastify({
    // zod validates and serialises every route: naming the compilers here keeps Fastify from loading its default
    // ones (ajv, fast-json-stringify), their start-up time and their memory, for nothing.
    schemaController: {
      compilersFactory: {
        buildValidator: (() => validatorCompiler) as never,
        buildSerializer: (() => serializerCompiler) as never,
      },
    },
    loggerInstance: deps.logger,
    childLoggerFactory: lazyChildLoggerFactory,
    logController: new AccessLogController(deps.logger),
    bodyLimit: 1024 * 1024,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: ROUTER_OPTIONS,
    // Receiving the request; the deadline of the whole request is registerRequestDeadline's.
    requestTimeout: deps.config.requestTimeoutMs,
    trustProxy: deps.config.trustProxy,
    // Our own 503 (API error body, Retry-After) while closing: see registerShutdownRefusal.
    return503OnClosing: false,
    clientErrorHandler,
    // Errors raised before routing (a malformed percent-encoding in the URL) get the API's error body too.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const badUrl = error.code === 'FST_ERR_BAD_URL';
      void reply.code(400).send({
        ok: false,
        error: badUrl ? 'bad_url' : 'bad_request',
        message: badUrl ? 'The URL is not valid' : 'The request is not valid',
      });
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('key', null);
  app.decorateRequest('rateLimit', null);
  // First, so that every answer carries them, a 503 while shutting down included; a preflight ends here.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  await registerCors(app);
  registerShutdownRefusal(app);
  registerRequestDeadline(app, deps.config.requestTimeoutMs);
  registerErrorHandling(app);
  registerJsonParser(app);
  registerRouteDocs(app);
  deps.metrics.register(app);

  recordRoutes(app, deps.config.publicBaseUrl);
  for (const routes of PUBLIC_MODULES) await app.register(named(routes(deps), routes.name));

  await app.register(
    named(async (api) => {
      registerApiChain(
        api,
        deps.auth,
        deps.rateLimiter,
        deps.metrics,
        createPreAuthLimiter(deps.config.preAuthRateLimitPerMinute, deps.auth.activeKeyHashes),
      );
      registerIdempotency(api, {
        db: deps.db,
        // A request cannot commit past REQUEST_TIMEOUT_MS, so a claim older than twice that is a dead one.
        leaseMs: 2 * deps.config.requestTimeoutMs,
        afterCommit: (request, reply) => deps.testHooks.afterIdempotentCommit?.(request, reply),
      });
      registerWriteScopes(api);
      registerReadRouting(api, deps.db);
      for (const routes of API_MODULES) await api.register(named(routes(deps), routes.name));
    }, 'api'),
    { prefix: '/api/v1' },
  );
  return app;
}

/**
 * Fastify names a plugin that has no display name by searching the whole module cache for it, at each registration
 * (slow in a process that has loaded many modules); the route factory's name identifies it as well.
 */
function named(plugin: FastifyPluginAsync, name: string): FastifyPluginAsync {
  return Object.assign(plugin, { [Symbol.for('fastify.display-name')]: name });
}
