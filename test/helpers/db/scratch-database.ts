// A throwaway PostgreSQL database on a server you name (tests and benchmarks): created empty, dropped after.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

async function onServer(adminUrl: string, sql: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * `template` copies an existing database (it must have no open connections), e.g. one migrated once per test run;
 * `fileCopy` copies it file by file (two checkpoints, but no WAL for every page: faster for gigabytes).
 */
export async function createScratchDatabase(
  adminUrl: string,
  prefix: string,
  template?: string,
  fileCopy = false,
): Promise<ScratchDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const from = template ? ` TEMPLATE "${template}"${fileCopy ? ' STRATEGY FILE_COPY' : ''}` : '';
  await onServer(adminUrl, `CREATE DATABASE "${name}"${from}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
