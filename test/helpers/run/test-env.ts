/** TEST_DATABASE_URL selects PostgreSQL; otherwise every test file gets an in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = Boolean(TEST_DATABASE_URL);
/**
 * The name of an existing database on TEST_DATABASE_URL's server that every test file copies instead of a newly
 * migrated one (it is neither changed nor dropped): the suites run on the result of an upgrade, e.g. the database
 * `BENCH_KEEP=1 npm run bench:partitions` converted.
 */
export const TEST_DATABASE_TEMPLATE = (onPostgres && process.env.TEST_DATABASE_TEMPLATE) || undefined;
/**
 * A transaction pooler (PgBouncer in transaction mode, scripts/pgbouncer.sh) in front of TEST_DATABASE_URL's
 * server, e.g. postgresql://postgres@127.0.0.1:6432/postgres: each test file's app then connects through it to
 * the file's database (the database name is substituted), while the databases are created and dropped directly.
 */
export const TEST_DATABASE_POOLER_URL = (onPostgres && process.env.TEST_DATABASE_POOLER_URL) || undefined;
/** With the pooler: also give the apps DATABASE_DIRECT_URL (migrations and LISTEN on a direct connection). */
export const TEST_DATABASE_DIRECT =
  Boolean(TEST_DATABASE_POOLER_URL) && /^(1|true|yes)$/.test(process.env.TEST_DATABASE_DIRECT ?? '');

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

/** TEST_ECHO_ERROR_LOGS=1: test apps also write their error-level log lines to stderr (`[app error log] …`). */
export const ECHO_ERROR_LOGS = /^(1|true|yes)$/.test(process.env.TEST_ECHO_ERROR_LOGS ?? '');
