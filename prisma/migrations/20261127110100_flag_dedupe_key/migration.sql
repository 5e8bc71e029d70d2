-- migrate:no-transaction
-- Flags the system raises from a repeated signal (a telematics fault code, a failed inspection item) carry a key
-- naming that signal; while such a flag is open (OPEN or IN_PROGRESS) a second one with the same key on the same
-- asset cannot exist, however many instances see the signal at once. Built CONCURRENTLY: flags keep being raised.
ALTER TABLE "flags" ADD COLUMN IF NOT EXISTS "dedupeKey" TEXT;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "flags_open_dedupe_key" ON "flags"("assetId", "dedupeKey")
  WHERE "dedupeKey" IS NOT NULL AND "status" IN ('OPEN', 'IN_PROGRESS');
