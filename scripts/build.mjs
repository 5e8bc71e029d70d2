// Compiles src/ (with the generated Prisma client) to dist/: plain JavaScript that `node` runs with no
// transpiler. A clean build every time, so a deleted source file never survives as a stale dist/*.js.
// Relative `./x.ts` imports become `./x.js` (rewriteRelativeImportExtensions); dist/ mirrors src/ at the same
// depth, so files read by relative URL (CHANGELOG.md, prisma/migrations, .git) resolve from both.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}dist`, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
