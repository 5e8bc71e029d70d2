/**
 * The production image ships what runtime-files.txt lists (scripts/stage-runtime.mjs). A file the server reads
 * at run time by a path relative to its own module must be on that list, or the image starts without it.
 * CI proves the whole layout by starting it (scripts/verify-image.mjs); this catches the omission in the
 * ordinary test run, before a build.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript build script without type declarations
import { runtimeFiles } from '../../scripts/stage-runtime.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Repository paths read through `new URL('<relative>', import.meta.url)`, resolved from the compiled file. */
function relativeReads(): { file: string; target: string }[] {
  const reads: { file: string; target: string }[] = [];
  for (const file of sources(path.join(ROOT, 'src'))) {
    for (const [, rel] of readFileSync(file, 'utf8').matchAll(/new URL\(\s*'([^']+)'\s*,\s*import\.meta\.url\s*\)/g)) {
      // dist/ mirrors src/ at the same depth, so the compiled file resolves the same repository path.
      const compiled = path.join(ROOT, 'dist', path.relative(path.join(ROOT, 'src'), file));
      reads.push({
        file: path.relative(ROOT, file),
        target: path.relative(ROOT, path.resolve(path.dirname(compiled), rel)),
      });
    }
  }
  return reads;
}

const shipped = (target: string, list: string[]) =>
  list.some((entry) => target === entry || target.startsWith(`${entry}/`));

describe('runtime-files.txt', () => {
  const list: string[] = runtimeFiles();

  it('ships the compiled output, the manifest and lockfile, and the migrations', () => {
    for (const needed of ['dist', 'package.json', 'package-lock.json', 'prisma/migrations'])
      expect(list).toContain(needed);
  });

  it('ships every file the server reads by a path relative to its own module', () => {
    const reads = relativeReads().filter((r) => r.target !== ''); // the repository root itself (build-info's .git lookup is optional)
    expect(reads.map((r) => r.target)).toEqual(expect.arrayContaining(['CHANGELOG.md', 'prisma/migrations']));
    const missing = reads.filter((r) => !shipped(r.target, list));
    expect(missing).toEqual([]);
  });

  it('ships nothing outside the repository and no sources or tests', () => {
    for (const entry of list) {
      expect(path.isAbsolute(entry) || entry.split('/').includes('..')).toBe(false);
      expect(['src', 'test', 'bench', 'scripts', 'node_modules']).not.toContain(entry.split('/')[0]);
    }
  });
});
