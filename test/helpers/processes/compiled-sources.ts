// The sources as the processes some tests start (the server, the admin CLI) run them: transpiled to JavaScript once
// and kept between runs (build-cache.ts), as `npm start` runs them compiled, rather than through tsx's loader, which
// costs each process about a second of CPU.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { initSync, parse } from 'es-module-lexer';
import { cachedBuild, filesUnder, hashOf, ROOT } from '../run/build-cache.ts';

const DIRS = ['src', 'test/helpers', 'test/fixtures'];
/** Read by the sources relative to their own location (migrations, changelog, git HEAD), and the packages. */
const LINKED = ['node_modules', 'package.json', 'prisma', 'CHANGELOG.md', '.git'];

let root: string | undefined;

/** The transpiled JavaScript of `script`, a TypeScript file under src/, test/helpers/ or test/fixtures/. */
export function compiledScript(script: string): string {
  const file = path.relative(ROOT, path.resolve(ROOT, script));
  if (!file.endsWith('.ts') || !DIRS.some((dir) => file.startsWith(`${dir}/`)))
    throw new Error(`${script}: only TypeScript under ${DIRS.join(', ')} is transpiled for a process`);
  root ??= cachedBuild(
    'fleet-test-js',
    hashOf(
      [
        ...filesUnder(...DIRS),
        path.relative(ROOT, fileURLToPath(import.meta.url)),
        'node_modules/esbuild/package.json',
      ],
      // The build links to this checkout (LINKED): another checkout sharing node_modules has builds of its own.
      ROOT,
    ),
    transpile,
  );
  return path.join(root, file.replace(/\.ts$/, '.js'));
}

/** The tree under `dir` mirrors the repository's, so that paths relative to a module resolve as from the sources. */
function transpile(dir: string): void {
  initSync();
  for (const file of filesUnder(...DIRS).filter((name) => name.endsWith('.ts'))) {
    const { code } = transformSync(readFileSync(path.join(ROOT, file), 'utf8'), {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      sourcefile: file,
    });
    const out = path.join(dir, file.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, withJsImports(code));
  }
  for (const name of LINKED) symlinkSync(path.join(ROOT, name), path.join(dir, name));
}

/** Relative `./x.ts` imports, static and dynamic, renamed `./x.js` (tsc's rewriteRelativeImportExtensions). */
function withJsImports(code: string): string {
  let out = '';
  let last = 0;
  for (const { n: specifier, s: start, e: end } of parse(code)[0]) {
    if (!specifier || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.ts')) continue;
    const at = code.lastIndexOf('.ts', end);
    if (at < start) throw new Error(`cannot rename the import of ${specifier}`);
    out += `${code.slice(last, at)}.js`;
    last = at + 3;
  }
  return out + code.slice(last);
}
