import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../composition.ts';
import {
  ChangelogResponse,
  HealthResponse,
  LiveResponse,
  MeResponse,
  UsageResponse,
  VersionResponse,
} from './meta.schemas.ts';

export const metaRoutes =
  ({ services, build, changelog, db }: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const uptimeSec = () => Math.floor(process.uptime());
    const meta = services.meta;
    // The handlers with nothing to wait for are not async: returning the answer directly spares each call a
    // promise and a turn of the microtask queue.

    app.get(
      '/health',
      {
        config: { public: true },
        // Probes come every few seconds from every orchestrator and load balancer: a passing one is not
        // logged at info (neither "incoming request" nor "request completed"); a failing one is, at warn.
        logLevel: 'warn',
        schema: {
          operationId: 'getHealth',
          tags: ['meta'],
          summary: 'Readiness: pings the database',
          response: {
            200: HealthResponse.describe('Ready: the database answered the ping'),
            503: HealthResponse.describe('Not ready: the database ping failed or timed out (2 s)'),
          },
        },
      },
      async (req, reply) => {
        const database = await meta.pingDatabase();
        const ok = database === 'ok';
        if (!ok) req.log.warn({ database }, 'health check failed: the database did not answer the ping');
        return reply.code(ok ? 200 : 503).send({
          ok,
          database,
          apiVersion: 'v1',
          commit: build.commit,
          uptimeSec: uptimeSec(),
          // A replica's state never fails readiness: without one the primary serves every read.
          ...(db.replicas && { replicas: db.replicas.status() }),
        });
      },
    );

    app.get(
      '/health/live',
      {
        config: { public: true },
        logLevel: 'warn', // a liveness probe cannot fail while the process answers: never worth a line

        schema: {
          operationId: 'getLiveness',
          tags: ['meta'],
          summary: 'Liveness: answers without touching the database',
          response: { 200: LiveResponse },
        },
      },
      () => ({ ok: true as const, uptimeSec: uptimeSec() }),
    );

    app.get(
      '/version',
      {
        config: { public: true },
        schema: {
          operationId: 'getVersion',
          tags: ['meta'],
          summary: 'Deployed build',
          response: { 200: VersionResponse },
        },
      },
      () => ({
        ok: true as const,
        commit: build.commit,
        branch: build.branch,
        uptimeSec: uptimeSec(),
        nodeVersion: process.version,
        apiVersion: 'v1' as const,
      }),
    );

    app.get(
      '/changelog',
      {
        config: { public: true },
        schema: {
          operationId: 'getChangelog',
          tags: ['meta'],
          summary: 'What each release gives users',
          response: { 200: ChangelogResponse },
        },
      },
      (_req, reply) => {
        reply.header('Cache-Control', 'public, max-age=3600, s-maxage=3600');
        return { entries: changelog };
      },
    );

    app.get(
      '/me',
      {
        config: { scope: null },
        schema: {
          operationId: 'getMe',
          tags: ['meta'],
          summary: 'The calling key and its organisation',
          response: { 200: MeResponse },
        },
      },
      // JSON text made by the service from a template checked against MeResponse once per key: sent as it is.
      // (typed as the schema's object: Fastify sends a string with a JSON type without serialising it)
      (req, reply) => {
        reply.type('application/json; charset=utf-8').send(meta.meJson(req.key!) as never);
      },
    );

    app.get(
      '/me/usage',
      {
        config: { scope: null },
        schema: {
          operationId: 'getMyUsage',
          tags: ['meta'],
          summary: 'Rate-limit usage of the calling key (this call counts; same numbers as its X-RateLimit headers)',
          response: { 200: UsageResponse },
        },
      },
      (req) => meta.usage(req.key!, req.rateLimit!),
    );
  };
