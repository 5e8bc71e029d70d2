/** HTML helpers shared by the documentation pages (/, /docs, /docs/webhooks). */

export const escapeHtml = (value: unknown): string =>
  String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/**
 * Nothing external: scripts, styles, fonts, images and fetches come from this origin only (try-it requests too:
 * connect-src 'self'). Inline styles are allowed because the reference (Vue) sets style attributes and injects
 * <style> elements at run time; inline scripts are not (the reference's start-up lives in /docs/assets).
 * data: images are the reference's inline SVG icons.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every documentation HTML page is sent with. */
export const DOCS_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': DOCS_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** Links every page shows: the service's public entry points. */
export const ENTRY_POINTS = [
  {
    key: 'docs',
    href: '/docs',
    label: 'API reference',
    description: 'Interactive reference of every operation, with try-it',
  },
  {
    key: 'webhooks',
    href: '/docs/webhooks',
    label: 'Webhooks',
    description: 'Events, payloads, headers and signature checks',
  },
  { key: 'openapi', href: '/openapi.yaml', label: 'openapi.yaml', description: 'The OpenAPI 3.1 contract' },
  {
    key: 'asyncapi',
    href: '/asyncapi.yaml',
    label: 'asyncapi.yaml',
    description: 'The webhooks contract (AsyncAPI 2.6)',
  },
  {
    key: 'health',
    href: '/api/v1/health',
    label: 'Health',
    description: 'Readiness: answers 200 when the database does',
  },
] as const;

const STYLE = `
:root{color-scheme:light;--fg:#1d1f23;--muted:#5b6270;--line:#dfe2e7;--bg:#f6f7f9;--accent:#1f5fbf;--code:#f1f3f6}
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#fff}
header.top{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;align-items:center;padding:.7rem 1.25rem;border-bottom:1px solid var(--line);background:var(--bg)}
header.top nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}
header.top a{color:var(--accent);text-decoration:none}
header.top a[aria-current]{color:var(--fg);font-weight:600}
main{max-width:60rem;margin:0 auto;padding:1.5rem 1.25rem 4rem}
h1{font-size:1.8rem;margin:.5rem 0 1rem}h2{font-size:1.35rem;margin:2.2rem 0 .6rem;padding-top:.6rem;border-top:1px solid var(--line)}
h3{font-size:1.1rem;margin:1.6rem 0 .4rem}
a{color:var(--accent)}
code,pre{font:13.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:var(--code);padding:.05rem .3rem;border-radius:4px;overflow-wrap:anywhere}
pre{background:var(--code);padding:.8rem 1rem;border-radius:6px;overflow-x:auto}
pre code{background:none;padding:0}
table{border-collapse:collapse;width:100%;margin:.6rem 0;display:block;overflow-x:auto}
th,td{text-align:left;vertical-align:top;border-bottom:1px solid var(--line);padding:.4rem .6rem}
th{font-size:.85rem;color:var(--muted);font-weight:600}
td:first-child code{white-space:nowrap}
ul.toc{columns:2 14rem;padding-left:1.2rem}
details{margin:.4rem 0}summary{cursor:pointer;color:var(--muted)}
.muted{color:var(--muted)}
`;

/** The links to every entry point, the one at `current` marked as this page. */
export function entryLinks(current: string): string {
  return ENTRY_POINTS.map(
    (e) =>
      `<a href="${escapeHtml(e.href)}"${e.href === current ? ' aria-current="page"' : ''}>${escapeHtml(e.label)}</a>`,
  ).join('');
}

/** A docs page's opening up to its body: the title and inline styles (the CSP allows no external ones). */
export function pageHead(title: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>`;
}

/** A complete, self-contained page (styles inline, no script). */
export function docsPage(options: { title: string; current: string; body: string }): string {
  const nav = entryLinks(options.current);
  return `${pageHead(options.title, STYLE)}
<body>
<header class="top"><strong>Fleet Operations API</strong><nav>${nav}</nav></header>
<main>
${options.body}
</main>
</body>
</html>
`;
}
