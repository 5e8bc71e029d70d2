import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests and examples import the SDK by its package name, from its sources (tsconfig.json maps it the same way).
  resolve: { alias: { '@fleet-ops/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates one template database per run; each file gets its own copy of it.
    globalSetup: ['test/helpers/run/global-setup.ts'],
    pool: 'forks',
    // Each file owns its database, so files run in parallel safely. Much of a file's time is spent waiting
    // (database round trips, webhook receivers, timers), so one worker per core plus one keeps both cores busy;
    // vitest's default (cores - 1) left one of this 2-core machine's cores idle.
    fileParallelism: true,
    // --liftoff-only: see test/helpers/processes/node-process.ts (a file's PGlite lives seconds; optimising its
    // WebAssembly costs more CPU than it saves).
    poolOptions: { forks: { maxForks: availableParallelism() + 1, minForks: 1, execArgv: ['--liftoff-only'] } },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
