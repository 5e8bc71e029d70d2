import { compiledScript } from './compiled-sources.ts';

/**
 * V8's baseline WebAssembly compiler only, for the real `node` processes some tests start. A process that opens the
 * embedded database and lives seconds spends most of its CPU optimising PGlite's large WebAssembly module it never
 * runs long enough to profit from: `--liftoff-only` halves that start-up CPU on this 2-core machine (the same flag is
 * set for the test workers in vitest.config.ts). Production processes keep the optimising tier.
 */
const NODE_ARGS = ['--liftoff-only'] as const;

/** A process running TypeScript it names itself (an `-e` script importing sources): through tsx's loader. */
export const TS_NODE_ARGS = [...NODE_ARGS, '--import', 'tsx'] as const;

/** A process running `script` (under src/ or test/), as `npm start` runs it: compiled (compiled-sources.ts). */
export const nodeArgs = (script: string, ...args: string[]): string[] => [
  ...NODE_ARGS,
  compiledScript(script),
  ...args,
];
