/**
 * Arguments for the real `node` processes some tests start (the server, the admin CLI): TypeScript through
 * tsx's loader in the one process (the tsx binary would start a second), and V8's baseline WebAssembly
 * compiler only. A process that opens the embedded database and lives seconds spends most of its CPU
 * optimising PGlite's large WebAssembly module it never runs long enough to profit from: `--liftoff-only`
 * halves that start-up CPU on this 2-core machine (the same flag is set for the test workers in
 * vitest.config.ts). Production processes keep the optimising tier.
 */
export const TS_NODE_ARGS = ['--liftoff-only', '--import', 'tsx'] as const;

export const nodeArgs = (script: string, ...args: string[]): string[] => [...TS_NODE_ARGS, script, ...args];
