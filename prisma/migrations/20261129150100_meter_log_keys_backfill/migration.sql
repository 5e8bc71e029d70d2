-- migrate:no-transaction
-- The idempotency keys of readings recorded before meter_log_keys existed (its trigger, committed by the previous
-- migration, records every new one). Outside a transaction: a read of meter_logs that blocks no writer, and a
-- key recorded meanwhile by the trigger is left as it is.
INSERT INTO "meter_log_keys" ("orgId", "clientMutationId", "meterLogId", "loggedAt")
SELECT "orgId", "clientMutationId", id, "loggedAt" FROM "meter_logs" WHERE "clientMutationId" IS NOT NULL
ON CONFLICT DO NOTHING;
