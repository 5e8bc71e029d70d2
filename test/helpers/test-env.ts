/** TEST_DATABASE_URL selects PostgreSQL; otherwise every test file gets an in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = Boolean(TEST_DATABASE_URL);

/** Set by CI (`CI=true`): there a test that needs a machine tool (Chromium) fails when it is missing, never skips. */
export const inCI = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';

/** Debian's Chromium for the browser tests; CHROMIUM_PATH points elsewhere (or at nothing, to see the skip). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * SECRETS_ENCRYPTION_KEYS of every app, process and admin run a test starts (PostgreSQL requires one; a fixed
 * key lets processes of one test share the database's ciphertexts). Tests of the key itself set their own.
 */
export const TEST_SECRETS_KEYS = 'test:vnieZPbnl4IhIpePKi2z5ErYT7z2oUejSEVPnKTo1gQ=';

/** loadConfig with the test key (and anything else given). */
export const withTestKeys = (env: Record<string, string | undefined> = {}) => ({
  SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_KEYS,
  ...env,
});
