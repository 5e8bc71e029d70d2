import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each file owns a fresh database, so files run in parallel safely.
    fileParallelism: true,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
