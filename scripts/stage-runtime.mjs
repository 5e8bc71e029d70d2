// Builds the production runtime tree in a directory: copies what runtime-files.txt lists and, with --install,
// installs the production dependencies there. The Dockerfile's build stage and CI's layout check
// (scripts/verify-image.mjs) both call this, so the image and the check cannot drift.
// Usage: node scripts/stage-runtime.mjs [--install] <destination>   (after `npm run build`; destination new)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The listed paths: comments and blank lines dropped; absolute or parent paths refused. */
export function runtimeFiles() {
  const list = readFileSync(path.join(ROOT, 'runtime-files.txt'), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
  for (const entry of list) {
    if (path.isAbsolute(entry) || entry.split(/[\\/]/).includes('..'))
      throw new Error(`runtime-files.txt: ${entry} must be a path inside the repository`);
  }
  return list;
}

/**
 * Production dependencies only. --omit=optional as well: @prisma/client declares optional peer dependencies on
 * the prisma CLI and typescript, which npm otherwise installs as "devOptional" (~225 MB of CLI, compiler and
 * Prisma Studio the server never loads). The only optional production package it drops is pg-cloudflare
 * (Cloudflare Workers sockets; unused on Node). --ignore-scripts: nothing at run time needs an install script.
 */
export const INSTALL_ARGS = ['ci', '--omit=dev', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund'];

export function stageRuntime(destination, { install = false } = {}) {
  if (existsSync(destination)) throw new Error(`${destination} already exists`);
  const files = runtimeFiles();
  const missing = files.filter((entry) => !existsSync(path.join(ROOT, entry)));
  if (missing.length) throw new Error(`missing (run \`npm run build\` first?): ${missing.join(', ')}`);
  for (const entry of files) cpSync(path.join(ROOT, entry), path.join(destination, entry), { recursive: true });
  if (install) {
    const npm = spawnSync('npm', INSTALL_ARGS, { cwd: destination, stdio: ['ignore', 'ignore', 'inherit'] });
    if (npm.status !== 0) throw new Error(`npm ${INSTALL_ARGS.join(' ')} exited with ${npm.status}`);
    // sharp's prebuilt binaries (thumbnails) are optional dependencies of sharp, which --omit=optional drops: the
    // full install this runs beside (the build stage, same image and platform) chose this platform's, from the lockfile.
    const img = path.join(ROOT, 'node_modules', '@img');
    if (existsSync(img)) cpSync(img, path.join(destination, 'node_modules', '@img'), { recursive: true });
  }
  return files;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const install = args.includes('--install');
  const destination = args.find((a) => !a.startsWith('--'));
  if (!destination) {
    console.error('usage: node scripts/stage-runtime.mjs [--install] <destination>');
    process.exit(2);
  }
  try {
    const files = stageRuntime(path.resolve(destination), { install });
    console.log(`staged ${files.join(', ')}${install ? ' and production dependencies' : ''} in ${destination}`);
  } catch (err) {
    console.error(`stage-runtime: ${err.message}`);
    process.exit(1);
  }
}
