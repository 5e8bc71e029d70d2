import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

/**
 * Puts the run's migrated embedded database (the dump global-setup.ts made) in `dataDir`, as a server would have
 * left it: a process started there opens a database instead of creating and migrating one, which costs a cold
 * process several seconds of CPU. For tests whose subject is not the first start. On a PostgreSQL run there is no
 * dump, and the directory stays empty.
 */
export function seedEmbeddedDatabase(dataDir: string): void {
  const dump = inject('pgliteTemplate');
  if (!dump) return;
  const target = path.join(dataDir, 'pg');
  mkdirSync(target, { recursive: true });
  // The dump is a plain tar (its member names start with "/", which tar strips).
  const res = spawnSync('tar', ['-xf', dump, '-C', target], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`could not unpack the embedded database dump: ${res.stderr || res.error}`);
}
