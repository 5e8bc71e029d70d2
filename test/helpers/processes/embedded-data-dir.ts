import { cpSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

/**
 * Puts the run's migrated embedded database (the data directory global-setup.ts made) in `dataDir`, as a server
 * would have left it: a process started there opens a database instead of creating and migrating one, which costs a
 * cold process several seconds of CPU. For tests whose subject is not the first start. On a PostgreSQL run there is
 * no template, and the directory stays empty.
 */
export function seedEmbeddedDatabase(dataDir: string): void {
  const template = inject('pgliteTemplateDir');
  if (template) cpSync(template, path.join(dataDir, 'pg'), { recursive: true });
}
