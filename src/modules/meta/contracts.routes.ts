import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../composition.ts';

/** Machine-readable contracts, generated from the same schemas that validate requests and responses. */
export const contractRoutes =
  (_deps: AppDeps): FastifyPluginAsync =>
  async (app) => {
    app.get('/openapi.yaml', { schema: { hide: true } }, async (_req, reply) => {
      reply.type('application/yaml; charset=utf-8');
      return app.swagger({ yaml: true });
    });
  };
