// Imports nothing from vitest: the fixture a test runs as a process of its own (test/fixtures/start-loads.ts)
// starts its database from here too.
import { openAsBlob, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MemoryFS, type PGliteOptions } from '@electric-sql/pglite';

interface TemplateFiles {
  dirs: string[];
  files: { name: string; data: Uint8Array }[];
}

const templates = new Map<string, TemplateFiles>();

/** A data directory's entries, read once per process; directories come before what they hold. */
function templateFiles(dir: string): TemplateFiles {
  let template = templates.get(dir);
  if (!template) {
    const found: TemplateFiles = { dirs: [], files: [] };
    const walk = (rel: string) => {
      for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
        const name = `${rel}/${entry.name}`;
        if (entry.isDirectory()) {
          found.dirs.push(name);
          walk(name);
        } else {
          // A plain Uint8Array: its slice() is a copy, where a Buffer's is a view.
          found.files.push({ name, data: new Uint8Array(readFileSync(path.join(dir, name))) });
        }
      }
    };
    walk('');
    templates.set(dir, found);
    template = found;
  }
  return template;
}

/**
 * PGlite's in-memory file system, filled with a copy of a migrated data directory before the server starts, which
 * then resumes that cluster. PGlite's own `loadDataDir` reads a tar archive in JavaScript on every start, which
 * cost a test file's start more CPU than the server's own start-up (docs/development/testing.md).
 */
class TemplateFS extends MemoryFS {
  constructor(private readonly template: TemplateFiles) {
    super();
  }

  override async initialSyncFs(): Promise<void> {
    const mod = this.pg!.Module;
    const FS = mod.FS;
    const root: string = mod.ENV.PGDATA;
    FS.mkdirTree(root);
    for (const dir of this.template.dirs) FS.mkdir(root + dir);
    // Each start gets its own copy, which the in-memory file system then owns: the server writes to its files in
    // place, and the template serves every start.
    for (const file of this.template.files) FS.writeFile(root + file.name, file.data.slice(), { canOwn: true });
  }
}

const PGLITE_DIST = pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
let engineParts: Promise<Pick<PGliteOptions, 'pgliteWasmModule' | 'fsBundle'>> | undefined;
// The global's value (this project's TypeScript libraries declare its types only).
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } })
  .WebAssembly;

/**
 * What an in-memory PGlite starts from: a copy of the migrated data directory `templateDir`, and PGlite's
 * WebAssembly module and file bundle, compiled and read once per process rather than once per database.
 */
export async function pgliteFromTemplate(
  templateDir: string,
): Promise<Pick<PGliteOptions, 'fs' | 'pgliteWasmModule' | 'fsBundle'>> {
  engineParts ??= (async () => ({
    pgliteWasmModule: await wasm.compile(await readFile(new URL('pglite.wasm', PGLITE_DIST))),
    fsBundle: await openAsBlob(new URL('pglite.data', PGLITE_DIST)),
  }))();
  return { ...(await engineParts), fs: new TemplateFS(templateFiles(templateDir)) };
}
