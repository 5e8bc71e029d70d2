-- Meter logs (by "loggedAt"), events and webhook deliveries (by "createdAt") become partitioned by calendar month
-- (UTC), keeping their names (docs/adr/0080-monthly-partitions-built.md). A database whose tables are empty (a new
-- installation) gets the partitioned tables here; one that holds rows keeps its tables until the online conversion
-- (`npm run admin -- partitions:convert`, docs/operations/partitions.md) attaches them as partitions.

-- A delivery names its event by (id, "createdAt"): the foreign key into a partitioned events table must include
-- the partition key. Nullable here (instant on a table with rows); the conversion makes it NOT NULL.
ALTER TABLE "webhook_deliveries" ADD COLUMN "eventCreatedAt" TIMESTAMPTZ(3);

-- The outbox sets "eventCreatedAt" from the event it has just inserted; a writer that leaves it out (the previous
-- release, a script) gets the event's own, or now() for an event inserted by the same statement (not visible to
-- it yet, and stamped now() by its default).
CREATE FUNCTION "webhook_deliveries_event_created_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."eventCreatedAt" := COALESCE((SELECT e."createdAt" FROM "events" e WHERE e.id = NEW."eventId" LIMIT 1), now());
  RETURN NEW;
END $$;

CREATE TRIGGER "webhook_deliveries_event_created_at" BEFORE INSERT ON "webhook_deliveries"
  FOR EACH ROW WHEN (NEW."eventCreatedAt" IS NULL) EXECUTE FUNCTION "webhook_deliveries_event_created_at"();

-- A reading's clientMutationId stays unique per organisation whatever its month: a partitioned table's unique
-- keys must include "loggedAt", so this small table holds the key, written by a trigger in the reading's statement
-- (every writer, the previous release's included). A second reading with the key fails as the unique index did,
-- and the first is found by its (id, "loggedAt"): one partition.
CREATE TABLE "meter_log_keys" (
    "orgId" TEXT NOT NULL,
    "clientMutationId" TEXT NOT NULL,
    "meterLogId" TEXT NOT NULL,
    "loggedAt" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "meter_log_keys_pkey" PRIMARY KEY ("orgId", "clientMutationId")
);
ALTER TABLE "meter_log_keys" ADD CONSTRAINT "meter_log_keys_orgId_fkey" FOREIGN KEY ("orgId")
  REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE FUNCTION "meter_log_keys_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "meter_log_keys" ("orgId", "clientMutationId", "meterLogId", "loggedAt")
  VALUES (NEW."orgId", NEW."clientMutationId", NEW.id, NEW."loggedAt");
  RETURN NULL;
END $$;

CREATE FUNCTION "meter_log_keys_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "meter_log_keys"
  WHERE "orgId" = OLD."orgId" AND "clientMutationId" = OLD."clientMutationId" AND "meterLogId" = OLD.id;
  RETURN NULL;
END $$;

CREATE TRIGGER "meter_logs_key_insert" AFTER INSERT ON "meter_logs"
  FOR EACH ROW WHEN (NEW."clientMutationId" IS NOT NULL) EXECUTE FUNCTION "meter_log_keys_insert"();
CREATE TRIGGER "meter_logs_key_delete" AFTER DELETE ON "meter_logs"
  FOR EACH ROW WHEN (OLD."clientMutationId" IS NOT NULL) EXECUTE FUNCTION "meter_log_keys_delete"();

-- The month partition of `parent` (a partitioned table) holding instant `at`, created unless one covers it: a plain
-- table then ATTACH, which locks the parent in SHARE UPDATE EXCLUSIVE mode only (reads and writes go on). Returns the
-- name created, or NULL. Serialised per parent by a transaction-scoped advisory lock. A table that is not
-- partitioned yet (before the conversion) is left alone.
CREATE FUNCTION "fleet_month_partition"(parent text, at timestamptz) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  lo timestamptz := date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  hi timestamptz := (date_trunc('month', at AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
  part text := parent || '_' || to_char(at AT TIME ZONE 'UTC', 'YYYY_MM');
  bound record;
BEGIN
  IF (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('public.%I', parent))) IS DISTINCT FROM 'p' THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('fleet_month_partition:' || parent));
  FOR bound IN SELECT * FROM "fleet_partitions"(parent) LOOP
    IF at >= bound.lower_bound AND at < bound.upper_bound THEN RETURN NULL; END IF;
  END LOOP;
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, lo, hi);
  RETURN part;
END $$;

-- The partitions of `parent` with their bounds (MINVALUE reads as -infinity), oldest first.
CREATE FUNCTION "fleet_partitions"(parent text)
  RETURNS TABLE (name text, lower_bound timestamptz, upper_bound timestamptz) LANGUAGE sql STABLE AS $$
  SELECT b.name,
         CASE WHEN b.lo = 'MINVALUE' THEN '-infinity'::timestamptz ELSE btrim(b.lo, '''')::timestamptz END,
         CASE WHEN b.hi = 'MAXVALUE' THEN 'infinity'::timestamptz ELSE btrim(b.hi, '''')::timestamptz END
  FROM (
    SELECT c.relname::text AS name,
           substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(([^)]*)\)') AS lo,
           substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(([^)]*)\)') AS hi
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = to_regclass(format('public.%I', parent))
  ) b
  ORDER BY 2
$$;

-- A new installation: the three tables are empty, so they are replaced by their partitioned form at once.
DO $$
BEGIN
  LOCK TABLE "webhook_deliveries", "events" IN ACCESS EXCLUSIVE MODE;
  IF EXISTS (SELECT 1 FROM "events") OR EXISTS (SELECT 1 FROM "webhook_deliveries") THEN
    RAISE NOTICE 'events and webhook_deliveries hold rows: run the partition conversion';
    RETURN;
  END IF;
  DROP TABLE "webhook_deliveries";
  DROP TABLE "events";

  CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "events_pkey" PRIMARY KEY ("id", "createdAt")
  ) PARTITION BY RANGE ("createdAt");
  CREATE INDEX "events_orgId_createdAt_id_idx" ON "events"("orgId", "createdAt", "id");
  CREATE INDEX "events_orgId_type_createdAt_id_idx" ON "events"("orgId", "type", "createdAt", "id");
  ALTER TABLE "events" ADD CONSTRAINT "events_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id")
    ON DELETE CASCADE ON UPDATE CASCADE;

  CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "eventType" TEXT NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) DEFAULT CURRENT_TIMESTAMP,
    "leaseUntil" TIMESTAMPTZ(3),
    "lastAttemptAt" TIMESTAMPTZ(3),
    "deliveredAt" TIMESTAMPTZ(3),
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedBy" TEXT,
    "requeues" JSONB NOT NULL DEFAULT '[]',
    "eventCreatedAt" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id", "createdAt")
  ) PARTITION BY RANGE ("createdAt");
  CREATE UNIQUE INDEX "webhook_deliveries_subscriptionId_eventId_createdAt_key"
    ON "webhook_deliveries"("subscriptionId", "eventId", "createdAt");
  CREATE INDEX "webhook_deliveries_status_nextAttemptAt_idx" ON "webhook_deliveries"("status", "nextAttemptAt");
  CREATE INDEX "webhook_deliveries_queue_idx" ON "webhook_deliveries"("subscriptionId", "nextAttemptAt")
    WHERE "status" IN ('PENDING', 'FAILED');
  CREATE INDEX "webhook_deliveries_subscriptionId_createdAt_id_idx"
    ON "webhook_deliveries"("subscriptionId", "createdAt", "id");
  CREATE INDEX "webhook_deliveries_subscriptionId_status_createdAt_id_idx"
    ON "webhook_deliveries"("subscriptionId", "status", "createdAt", "id");
  CREATE INDEX "webhook_deliveries_eventCreatedAt_eventId_idx"
    ON "webhook_deliveries"("eventCreatedAt", "eventId");
  ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_orgId_fkey" FOREIGN KEY ("orgId")
    REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
  ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscriptionId_fkey" FOREIGN KEY ("subscriptionId")
    REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
  ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_eventId_eventCreatedAt_fkey"
    FOREIGN KEY ("eventId", "eventCreatedAt") REFERENCES "events"("id", "createdAt") ON DELETE CASCADE ON UPDATE CASCADE;
  CREATE TRIGGER "webhook_deliveries_event_created_at" BEFORE INSERT ON "webhook_deliveries"
    FOR EACH ROW WHEN (NEW."eventCreatedAt" IS NULL) EXECUTE FUNCTION "webhook_deliveries_event_created_at"();
END $$;

DO $$
BEGIN
  LOCK TABLE "meter_logs" IN ACCESS EXCLUSIVE MODE;
  IF EXISTS (SELECT 1 FROM "meter_logs") THEN
    RAISE NOTICE 'meter_logs holds rows: run the partition conversion';
    RETURN;
  END IF;
  DROP TABLE "meter_logs";

  CREATE TABLE "meter_logs" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "assetId" TEXT NOT NULL,
    "projectId" TEXT,
    "loggedById" TEXT,
    "loggedByDeviceId" TEXT,
    "hoursReading" DOUBLE PRECISION NOT NULL,
    "delta" DOUBLE PRECISION NOT NULL,
    "state" TEXT,
    "fuelVolume" DOUBLE PRECISION,
    "fuelUnit" TEXT,
    "fuelCostTotal" DOUBLE PRECISION,
    "note" TEXT,
    "lat" DOUBLE PRECISION,
    "lng" DOUBLE PRECISION,
    "clientMutationId" TEXT,
    "reviewStatus" "ReviewStatus" NOT NULL DEFAULT 'NONE',
    "reviewReason" TEXT,
    "autoFlagId" TEXT,
    "loggedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reviewedAt" TIMESTAMPTZ(3),
    "reviewedById" TEXT,
    "source" TEXT NOT NULL DEFAULT 'api',
    "sourceId" TEXT,
    CONSTRAINT "meter_logs_pkey" PRIMARY KEY ("id", "loggedAt")
  ) PARTITION BY RANGE ("loggedAt");
  CREATE UNIQUE INDEX "meter_logs_orgId_clientMutationId_loggedAt_key"
    ON "meter_logs"("orgId", "clientMutationId", "loggedAt");
  CREATE INDEX "meter_logs_orgId_loggedAt_id_idx" ON "meter_logs"("orgId", "loggedAt", "id");
  CREATE INDEX "meter_logs_orgId_reviewStatus_loggedAt_id_idx" ON "meter_logs"("orgId", "reviewStatus", "loggedAt", "id");
  CREATE INDEX "meter_logs_assetId_loggedAt_id_idx" ON "meter_logs"("assetId", "loggedAt", "id");
  CREATE INDEX "meter_logs_projectId_assetId_idx" ON "meter_logs"("projectId", "assetId");
  CREATE INDEX "meter_logs_orgId_fuel_loggedAt_idx" ON "meter_logs"("orgId", "loggedAt")
    INCLUDE ("assetId", "projectId", "fuelVolume", "fuelUnit", "fuelCostTotal", "hoursReading", "reviewStatus", "source", "id")
    WHERE "fuelVolume" IS NOT NULL OR "fuelCostTotal" IS NOT NULL;
  CREATE INDEX "meter_logs_orgId_assetId_fuel_loggedAt_idx" ON "meter_logs"("orgId", "assetId", "loggedAt", "id")
    INCLUDE ("projectId", "fuelVolume", "fuelUnit", "fuelCostTotal", "hoursReading", "reviewStatus", "source")
    WHERE "fuelVolume" IS NOT NULL OR "fuelCostTotal" IS NOT NULL;
  ALTER TABLE "meter_logs" ADD CONSTRAINT "meter_logs_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id")
    ON DELETE CASCADE ON UPDATE CASCADE;
  ALTER TABLE "meter_logs" ADD CONSTRAINT "meter_logs_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "assets"("id")
    ON DELETE CASCADE ON UPDATE CASCADE;
  CREATE TRIGGER "meter_logs_project_usage_insert" AFTER INSERT ON "meter_logs"
    FOR EACH ROW WHEN (NEW."projectId" IS NOT NULL) EXECUTE FUNCTION "project_asset_usage_add"();
  CREATE TRIGGER "meter_logs_project_usage_update" AFTER UPDATE OF "projectId", "assetId", "delta", "loggedAt" ON "meter_logs"
    FOR EACH ROW EXECUTE FUNCTION "project_asset_usage_refresh"();
  CREATE TRIGGER "meter_logs_project_usage_delete" AFTER DELETE ON "meter_logs"
    FOR EACH ROW WHEN (OLD."projectId" IS NOT NULL) EXECUTE FUNCTION "project_asset_usage_refresh"();
  CREATE TRIGGER "meter_logs_key_insert" AFTER INSERT ON "meter_logs"
    FOR EACH ROW WHEN (NEW."clientMutationId" IS NOT NULL) EXECUTE FUNCTION "meter_log_keys_insert"();
  CREATE TRIGGER "meter_logs_key_delete" AFTER DELETE ON "meter_logs"
    FOR EACH ROW WHEN (OLD."clientMutationId" IS NOT NULL) EXECUTE FUNCTION "meter_log_keys_delete"();
END $$;

-- The months ahead (and the previous one for readings, often stamped a little in the past); the service keeps
-- creating them (src/db/partitions.ts).
SELECT "fleet_month_partition"(t.name, now() + m * interval '1 month')
FROM (VALUES ('events', 0), ('webhook_deliveries', 0), ('meter_logs', -1)) AS t(name, first),
     LATERAL generate_series(t.first, 3) AS m;
