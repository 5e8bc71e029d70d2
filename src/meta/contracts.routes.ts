import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../composition.ts';
import { CONTRACT_DOCUMENTS } from '../contracts/documents.ts';

/** Serves the generated contracts; each is rendered once, on first request, from the live route table. */
export const contractRoutes =
  (_deps: AppDeps): FastifyPluginAsync =>
  async (app) => {
    for (const doc of CONTRACT_DOCUMENTS) {
      let rendered: Promise<string> | undefined;
      app.get(`/${doc.file}`, { schema: { hide: true } }, async (_req, reply) => {
        // A failed render is not cached: the next request tries again.
        rendered ??= doc.render(app).catch((err: unknown) => {
          rendered = undefined;
          throw err;
        });
        reply.type(doc.contentType);
        return await rendered;
      });
    }
  };
