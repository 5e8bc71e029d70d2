// Writes the generated docs pages (`npm run docs`): docs/configuration.md and docs/reference/*.md, or fails naming
// every stale page (`npm run docs:check`, in CI). The routes' scopes come from the OpenAPI document of a real app
// instance, as `npm run contracts` makes it, so a page cannot drift from what the server enforces.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createDeps } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { openApiDocument } from '../src/contracts/openapi.ts';
import { openDatabase } from '../src/db/database.ts';
import { CONFIG_PAGE, render as renderConfiguration } from './config-docs.ts';
import {
  operationsOf,
  renderAdminCli,
  renderErrors,
  renderEvents,
  renderIndex,
  renderScopes,
} from './reference-pages.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The OpenAPI document of an app built as scripts/contracts.ts builds it. */
export async function loadOpenApi(): Promise<Record<string, unknown>> {
  const config = loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000', LOG_LEVEL: 'silent' });
  const db = await openDatabase({ dataDir: 'memory://' });
  const deps = createDeps(config, db, pino({ level: 'silent' }) as unknown as FastifyBaseLogger);
  const app = await buildApp(deps);
  try {
    await app.ready();
    return await openApiDocument(app);
  } finally {
    await app.close();
    await deps.close();
    await db.close();
  }
}

/** Every generated page: path from the repository root to its text. */
export async function renderDocs(openapi?: Record<string, unknown>): Promise<Map<string, string>> {
  const operations = operationsOf(openapi ?? (await loadOpenApi()));
  return new Map([
    [CONFIG_PAGE, renderConfiguration()],
    ['docs/reference/README.md', renderIndex()],
    ['docs/reference/scopes.md', renderScopes(operations)],
    ['docs/reference/admin-cli.md', renderAdminCli()],
    ['docs/reference/events.md', renderEvents(operations)],
    ['docs/reference/errors.md', renderErrors(operations)],
  ]);
}

/** The pages whose committed text differs from what the code says (a missing page is stale). */
export function stalePages(pages: Map<string, string>, root = ROOT): string[] {
  return [...pages]
    .filter(([file, text]) => {
      const target = path.join(root, file);
      return !existsSync(target) || readFileSync(target, 'utf8') !== text;
    })
    .map(([file]) => file);
}

async function main(mode: string) {
  const pages = await renderDocs();
  if (mode === 'write') {
    for (const [file, text] of pages) {
      mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
      writeFileSync(path.join(ROOT, file), text);
      console.log(`wrote ${file}`);
    }
    return;
  }
  const stale = stalePages(pages);
  if (stale.length) {
    console.error(`stale docs: ${stale.join(', ')}; run \`npm run docs\` and commit the result`);
    process.exit(1);
  }
  console.log('generated docs are up to date');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mode = process.argv[2];
  if (mode !== 'write' && mode !== 'check') {
    console.error('usage: tsx scripts/reference-docs.ts write|check');
    process.exit(2);
  }
  main(mode).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
