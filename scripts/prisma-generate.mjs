// Runs `prisma generate` where Prisma's engine download host is unreachable.
// Generate never executes the schema-engine binary, but the CLI refuses to start unless it can locate one,
// so we point PRISMA_SCHEMA_ENGINE_BINARY at an existing file (this script) when none is configured.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ||= fileURLToPath(import.meta.url);

const result = spawnSync(process.execPath, [cli, 'generate'], { stdio: ['ignore', 'pipe', 'inherit'], env });
if (result.status !== 0) {
  process.stdout.write(result.stdout);
  process.exit(result.status ?? 1);
}
