// Generates the Prisma client (src/generated/prisma) where Prisma's engine download host is unreachable.
// Generate never executes the schema-engine binary, but the CLI refuses to start unless it can locate one,
// so we point PRISMA_SCHEMA_ENGINE_BINARY at an existing file (this script) when none is configured.
// Runs before start, test, typecheck and admin: it is silent on success (the admin CLI's --json output must
// stay one JSON object) and skips the work when the client was generated from the same schema and version.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { compactParameterizationSchema } from './prisma-parameterization.mjs';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = require.resolve('prisma/build/index.js');
const stamp = `${root}src/generated/prisma/.generated-from`;
const fingerprint = createHash('sha256')
  .update(readFileSync(`${root}prisma/schema.prisma`))
  .update(require('prisma/package.json').version)
  .update(readFileSync(`${root}scripts/prisma-parameterization.mjs`))
  .digest('hex');

if (existsSync(stamp) && readFileSync(stamp, 'utf8') === fingerprint && !process.argv.includes('--force'))
  process.exit(0);

const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ||= fileURLToPath(import.meta.url);
const result = spawnSync(process.execPath, [cli, 'generate'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
if (result.status !== 0) {
  process.stderr.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exit(result.status ?? 1);
}
// The runtime keeps this schema in memory for the life of the process: see prisma-parameterization.mjs.
const client = `${root}src/generated/prisma/internal/class.ts`;
const compacted = compactParameterizationSchema(readFileSync(client, 'utf8'));
if (compacted === undefined)
  process.stderr.write(`prisma-generate: ${client} left as generated (schema not understood)\n`);
else writeFileSync(client, compacted);
writeFileSync(stamp, fingerprint);
