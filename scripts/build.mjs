// Compiles src/ (with the generated Prisma client) to dist/: plain JavaScript that `node` runs with no
// transpiler. A clean build every time, so a deleted source file never survives as a stale dist/*.js.
// Relative `./x.ts` imports become `./x.js` (rewriteRelativeImportExtensions); dist/ mirrors src/ at the same
// depth, so files read by relative URL (CHANGELOG.md, prisma/migrations, .git) resolve from both.
// Then it copies the /docs reference's browser bundle from its npm package (a development dependency) next to
// the module that serves it (src/site/docs.assets.ts), so the image ships that one file and not the
// package's ~240 MB of dependencies.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}dist`, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);

const vendor = `${root}dist/site/vendor`;
mkdirSync(vendor, { recursive: true });
copyFileSync(require.resolve('@scalar/api-reference/browser/standalone.js'), `${vendor}/scalar-api-reference.js`);
