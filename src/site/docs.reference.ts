import { entryLinks, escapeHtml, pageHead } from './docs.html.ts';

/**
 * Start-up of the interactive reference, served as a file (/docs/assets/reference-init.<hash>.js) because the
 * page's Content-Security-Policy allows no inline script. Every option that would reach outside the service is
 * off: Scalar's web fonts (withDefaultFonts), telemetry, the AI agent, the "open in API client" button (a hosted
 * app) and its developer toolbar; no proxyUrl is set, so try-it requests go straight from the browser to this
 * service, whose CORS and connect-src 'self' allow exactly that. The try-it target is the origin the page was
 * loaded from (not PUBLIC_BASE_URL), so the reference works behind any host name the service is reached by.
 */
export const REFERENCE_INIT_JS = `'use strict';
(function () {
  var origin = window.location.origin;
  window.Scalar.createApiReference('#app', {
    url: '/openapi.yaml',
    servers: [{ url: origin, description: 'This server' }],
    authentication: { preferredSecurityScheme: 'bearerAuth' },
    persistAuth: false,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    hideClientButton: true,
    showDeveloperTools: 'never',
    documentDownloadType: 'yaml',
    defaultOpenAllTags: false,
    theme: 'default',
    customCss: ${JSON.stringify(
      ':root{--scalar-custom-header-height:44px;--scalar-font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;' +
        '--scalar-font-code:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}',
    )}
  });
})();
`;

const HEADER_STYLE =
  'body{margin:0}' +
  '.docs-top{position:sticky;top:0;z-index:100;height:44px;display:flex;gap:1rem;align-items:center;overflow-x:auto;' +
  'white-space:nowrap;padding:0 1rem;border-bottom:1px solid #dfe2e7;background:#f6f7f9;' +
  'font:14px/1 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}' +
  '.docs-top a{color:#1f5fbf;text-decoration:none}.docs-top a[aria-current]{color:#1d1f23;font-weight:600}' +
  '.docs-top strong{color:#1d1f23}' +
  'noscript p{font:16px system-ui,sans-serif;padding:1rem}';

/** The /docs page: a links bar (webhooks page, contracts, health), then the reference rendered by the bundle. */
export function referenceHtml(bundleUrl: string, initUrl: string): string {
  const links = entryLinks('/docs');
  return `${pageHead('Fleet Operations API reference', HEADER_STYLE)}
<body>
<header class="docs-top"><strong>Fleet Operations API</strong>${links}</header>
<noscript><p>The interactive reference needs JavaScript. The contract itself is <a href="/openapi.yaml">openapi.yaml</a>;
webhooks are described at <a href="/docs/webhooks">/docs/webhooks</a>.</p></noscript>
<div id="app"></div>
<script src="${escapeHtml(bundleUrl)}"></script>
<script src="${escapeHtml(initUrl)}"></script>
</body>
</html>
`;
}
