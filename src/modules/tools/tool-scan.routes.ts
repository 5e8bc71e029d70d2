import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../composition.ts';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const STATUS_TEXT: Record<string, string> = {
  GOOD: 'Good',
  NEEDS_ATTENTION: 'Needs attention',
  BROKEN: 'Broken',
  MISSING: 'Missing',
  RETIRED: 'Retired',
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:1rem;background:#f4f5f7;color:#1d1f23}
main{max-width:28rem;margin:0 auto;background:#fff;border-radius:12px;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.5rem;margin:0 0 1rem}dl{margin:0}dt{font-size:.8rem;color:#5b6270;text-transform:uppercase;margin-top:.8rem}
dd{margin:.2rem 0 0;font-size:1.1rem}p{color:#5b6270}
h1,dd{overflow-wrap:anywhere}
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

/**
 * The public page behind a tool label's QR code (outside /api/v1, no key). It shows only what a finder of
 * the tool should see: name, category, status and the owning organisation's name.
 */
export const scanRoutes =
  ({ services }: AppDeps): FastifyPluginAsync =>
  async (app) => {
    app.get<{ Params: { token: string } }>('/scan/:token', { schema: { hide: true } }, async (req, reply) => {
      const tool = await services.tools.scan(req.params.token);
      reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
      if (!tool) {
        return reply
          .code(404)
          .send(
            page(
              'Label not found',
              '<h1>Label not found</h1><p>This tool label is not known. It may have been replaced.</p>',
            ),
          );
      }
      const rows: [string, string][] = [
        ['Category', tool.category ?? '—'],
        ['Status', STATUS_TEXT[tool.status] ?? tool.status],
        ['Belongs to', tool.organizationName],
      ];
      const list = rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('');
      return reply.send(
        page(
          tool.name,
          `<h1>${escapeHtml(tool.name)}</h1><dl>${list}</dl><p>Found this tool? Please return it to its owner.</p>`,
        ),
      );
    });
  };
