import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const FORKS = availableParallelism() + 1;
// On PostgreSQL (CI's runs; `npm test` uses the embedded database) each file keeps a worker of its own: with shared
// workers the conformance sweep missed one status in each of two CI runs there, for a reason not yet found (ADR 0042).
const SHARED_WORKERS = !process.env.TEST_DATABASE_URL;

export default defineConfig({
  // Tests and examples import the SDK by its package name, from its sources (tsconfig.json maps it the same way).
  resolve: { alias: { '@fleet-ops/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates one template database per run; each file gets its own copy of it.
    globalSetup: ['test/helpers/run/global-setup.ts'],
    pool: 'forks',
    // A worker process runs file after file on the modules it has already loaded (each file still owns its database
    // and app): loading the app again for every file cost more CPU than most files' tests.
    isolate: !SHARED_WORKERS,
    // Each file owns its database, so files run in parallel safely. Much of a file's time is spent waiting
    // (database round trips, webhook receivers, timers), so one worker per core plus one keeps both cores busy.
    fileParallelism: true,
    poolOptions: {
      forks: {
        // As many workers from start to end: a pool above its minimum retires idle workers as the queue empties,
        // and with workers shared between files that race ended runs with "Terminating worker thread".
        maxForks: FORKS,
        minForks: SHARED_WORKERS ? FORKS : 1,
        // --liftoff-only: see test/helpers/processes/node-process.ts (a file's PGlite lives seconds; optimising
        // its WebAssembly costs more CPU than it saves).
        execArgv: ['--liftoff-only'],
      },
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
