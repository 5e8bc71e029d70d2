/** TEST_DATABASE_URL selects PostgreSQL; otherwise every test file gets an in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = Boolean(TEST_DATABASE_URL);
