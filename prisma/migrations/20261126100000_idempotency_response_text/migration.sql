-- A database that applied the first text of 20261124100000_idempotency_keys (released in 0844e36, edited in
-- 821a659: the migrator accepts both checksums, see HISTORICAL_CHECKSUMS in src/db/migrator.ts) has
-- "responseBody" as BYTEA; the current text and code have TEXT holding base64 of the same sealed bytes.
-- Convert there, and only there: on every other database this finds TEXT and does nothing. The table holds at
-- most a day or two of keys, so the rewrite is short; it runs under the migrator's lock_timeout and retries.
DO $$
BEGIN
  IF (SELECT data_type FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = 'idempotency_keys' AND column_name = 'responseBody') = 'bytea'
  THEN
    ALTER TABLE "idempotency_keys"
      ALTER COLUMN "responseBody" TYPE TEXT USING translate(encode("responseBody", 'base64'), E'\n', '');
  END IF;
END
$$;
