import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../composition.ts';
import { acceptsGzip, lazyAsset, scalarBundle, type StaticAsset } from './docs.assets.ts';
import { DOCS_HEADERS, ENTRY_POINTS, docsPage, escapeHtml } from './docs.html.ts';
import { REFERENCE_INIT_JS, referenceHtml } from './docs.reference.ts';
import { errorBody } from '../core/errors.ts';

const initScript = lazyAsset(async () => REFERENCE_INIT_JS);
// The webhooks page is rendered on first request (it builds JSON Schemas and examples for every event).
const webhooksPage = lazyAsset(async () => (await import('./docs.webhooks.ts')).renderWebhooksPage());

/** Scripts by URL stem; the URL carries the content hash, so a cached copy is never stale. */
const SCRIPTS: Record<string, () => Promise<StaticAsset>> = {
  'scalar-api-reference': scalarBundle,
  'reference-init': initScript,
};
const assetUrl = (stem: string, asset: StaticAsset) => `/docs/assets/${stem}.${asset.hash}.js`;

function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: StaticAsset, type: string) {
  const gz = acceptsGzip(request.headers['accept-encoding']);
  reply.header('content-type', type).header('vary', 'Accept-Encoding').header('x-content-type-options', 'nosniff');
  if (gz) reply.header('content-encoding', 'gzip');
  return reply.send(gz ? asset.gzipped : asset.raw);
}

/**
 * The human documentation, public and outside the API key chain: /docs (the interactive reference of
 * openapi.yaml), /docs/webhooks (generated from the event catalog) and the reference's scripts, all served by
 * the service itself under a Content-Security-Policy that allows nothing external.
 */
export const docsRoutes =
  (_deps: AppDeps): FastifyPluginAsync =>
  async (app) => {
    app.get('/docs', { schema: { hide: true } }, async (_request, reply) => {
      const [bundle, init] = await Promise.all([scalarBundle(), initScript()]);
      const html = referenceHtml(assetUrl('scalar-api-reference', bundle), assetUrl('reference-init', init));
      return reply.headers(DOCS_HEADERS).send(html);
    });

    app.get('/docs/webhooks', { schema: { hide: true } }, async (request, reply) => {
      const page = await webhooksPage();
      reply.headers(DOCS_HEADERS);
      return sendAsset(request, reply, page, DOCS_HEADERS['content-type']);
    });

    app.get<{ Params: { file: string } }>('/docs/assets/:file', { schema: { hide: true } }, async (request, reply) => {
      const match = /^([a-z-]+)\.([0-9a-f]{16})\.js$/.exec(request.params.file);
      const load = match && Object.hasOwn(SCRIPTS, match[1]) ? SCRIPTS[match[1]] : undefined;
      const asset = load && (await load());
      if (!asset || asset.hash !== match?.[2]) {
        return reply.code(404).send(errorBody('not_found', 'No such documentation asset'));
      }
      reply.header('cache-control', 'public, max-age=31536000, immutable');
      return sendAsset(request, reply, asset, 'text/javascript; charset=utf-8');
    });
  };

/** JSON when the client prefers it (or states no preference: curl, scripts); HTML when a browser asks for it. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const q = (type: string) => {
    let best = 0;
    for (const part of accept.split(',')) {
      const [range, ...params] = part.trim().toLowerCase().split(';');
      const [main, sub] = range.trim().split('/');
      const [tMain, tSub] = type.split('/');
      if (main !== tMain || (sub !== tSub && sub !== '*')) continue;
      const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      best = Math.max(best, qp ? Number(qp.slice(2)) || 0 : 1);
    }
    return best;
  };
  const html = q('text/html');
  return html > 0 && html >= q('application/json');
}

/** `/`: where a person (HTML) or a program (JSON) finds the documentation, the contracts and the health check. */
export const homeRoutes =
  (_deps: AppDeps): FastifyPluginAsync =>
  async (app) => {
    app.get('/', { schema: { hide: true } }, async (request, reply) => {
      reply.header('vary', 'Accept');
      if (!prefersHtml(request.headers.accept)) {
        return reply.header('cache-control', 'no-cache').send({
          ok: true,
          name: 'Fleet Operations API',
          api: '/api/v1',
          links: Object.fromEntries(ENTRY_POINTS.map((e) => [e.key, e.href])),
        });
      }
      const items = ENTRY_POINTS.map(
        (e) => `<li><a href="${escapeHtml(e.href)}">${escapeHtml(e.label)}</a> — ${escapeHtml(e.description)}</li>`,
      ).join('');
      const body = `<h1>Fleet Operations API</h1>
<p>Fleet and shop management over JSON: assets, meter logs, flags, work orders, repairs, tools, projects, yards
and signed webhooks. Every API route lives under <code>/api/v1</code> and takes
<code>Authorization: Bearer &lt;API key&gt;</code>.</p>
<ul>${items}</ul>`;
      return reply.headers(DOCS_HEADERS).send(docsPage({ title: 'Fleet Operations API', current: '/', body }));
    });
  };
