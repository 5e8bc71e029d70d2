import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApi, renderDocs, stalePages } from '../../scripts/reference-docs.ts';
import { operationsOf } from '../../scripts/reference-pages.ts';
import { ADMIN_COMMANDS } from '../../src/cli/admin-commands.ts';
import { SCOPES } from '../../src/core/context.ts';
import { errorCodeInfo } from '../../src/core/error-codes.ts';
import { EVENT_TYPES } from '../../src/events/catalog.ts';

type Json = Record<string, any>;
let openapi: Json;
let pages: Map<string, string>;

// One app instance renders the OpenAPI document (PGlite in memory): slow on a busy machine.
beforeAll(async () => {
  openapi = await loadOpenApi();
  pages = await renderDocs(openapi);
}, 120_000);

/** Every `error` enum value of every error response in the document, with its status. */
function documentedCodes(doc: Json): Map<string, Set<number>> {
  const found = new Map<string, Set<number>>();
  const visit = (schema: Json | undefined, status: number, seen: Set<string>) => {
    if (!schema || typeof schema !== 'object') return;
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop()!;
      if (!seen.has(name)) visit(doc.components.schemas[name], status, new Set([...seen, name]));
      return;
    }
    for (const code of schema.properties?.error?.enum ?? []) {
      if (!found.has(code)) found.set(code, new Set());
      found.get(code)!.add(status);
    }
    for (const key of ['allOf', 'oneOf', 'anyOf']) for (const part of schema[key] ?? []) visit(part, status, seen);
  };
  for (const item of Object.values(doc.paths as Json))
    for (const op of Object.values(item as Json))
      for (const [status, response] of Object.entries((op as Json).responses ?? {}))
        for (const media of Object.values((response as Json).content ?? {}))
          if (Number(status) >= 400) visit((media as Json).schema, Number(status), new Set());
  return found;
}

describe('generated docs pages', () => {
  it('are committed as the code renders them (npm run docs)', () => {
    expect(stalePages(pages), 'run `npm run docs` and commit the result').toEqual([]);
  });

  it('name a page stale when its text differs or it is missing', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'fleet-docs-'));
    try {
      for (const [file, text] of pages) {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), text);
      }
      expect(stalePages(pages, root)).toEqual([]);
      writeFileSync(path.join(root, 'docs/reference/scopes.md'), pages.get('docs/reference/scopes.md')!.slice(1));
      rmSync(path.join(root, 'docs/reference/events.md'));
      expect(stalePages(pages, root)).toEqual(['docs/reference/scopes.md', 'docs/reference/events.md']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('list every scope, admin command and event type', () => {
    const scopes = pages.get('docs/reference/scopes.md')!;
    for (const scope of SCOPES) expect(scopes).toContain(`### ${scope}\n`);
    expect(scopes).toContain(`There are ${SCOPES.length} scopes.`);
    const admin = pages.get('docs/reference/admin-cli.md')!;
    for (const c of ADMIN_COMMANDS) expect(admin).toContain(`| \`${c.name}`);
    const events = pages.get('docs/reference/events.md')!;
    for (const type of EVENT_TYPES) expect(events).toContain(`| \`${type}\` |`);
  });

  it("list each operation under the scope its route declares, and every scope is some operation's", () => {
    const scopes = pages.get('docs/reference/scopes.md')!;
    const operations = operationsOf(openapi);
    const listAssets = operations.find((op) => op.operationId === 'listAssets')!;
    expect(listAssets.security).toEqual([['assets:read']]);
    const section = scopes.split('### assets:read\n')[1].split('###')[0];
    expect(section).toContain('- `GET /api/v1/assets`: ');
    for (const scope of SCOPES)
      expect(operations.some((op) => op.security?.some((alt) => alt.includes(scope)))).toBe(true);
  });

  it('know every error code the OpenAPI document lists, with its status', () => {
    const documented = documentedCodes(openapi);
    expect(documented.size).toBeGreaterThan(20);
    const wrong = [...documented].flatMap(([code, statuses]) => {
      const info = errorCodeInfo(code);
      if (!info) return [`${code}: not in src/core/error-codes.ts`];
      return [...statuses].filter((s) => !info.status.includes(s)).map((s) => `${code}: answered with ${s}`);
    });
    expect(wrong).toEqual([]);
  });
});
