-- GET /projects/{id}/equipment-usage read every meter log of the project per request (903 ms, 80,000 logs).
-- This rollup holds each (project, asset) pair's delta sum, log count and latest log, kept by triggers in the
-- same transaction as the log, so the endpoint reads one row per asset (src/modules/projects/project-usage.ts).
CREATE TABLE "project_asset_usage" (
    "projectId" TEXT NOT NULL,
    "assetId" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "hours" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "logCount" INTEGER NOT NULL DEFAULT 0,
    "lastLoggedAt" TIMESTAMPTZ(3),

    CONSTRAINT "project_asset_usage_pkey" PRIMARY KEY ("projectId", "assetId")
);

ALTER TABLE "project_asset_usage" ADD CONSTRAINT "project_asset_usage_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "project_asset_usage" ADD CONSTRAINT "project_asset_usage_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A new log adds to its pair in one upsert (POST /hours pays one index lookup, under the asset lock it holds).
CREATE FUNCTION "project_asset_usage_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "project_asset_usage" ("projectId", "assetId", "orgId", "hours", "logCount", "lastLoggedAt")
  VALUES (NEW."projectId", NEW."assetId", NEW."orgId", NEW."delta", 1, NEW."loggedAt")
  ON CONFLICT ("projectId", "assetId") DO UPDATE SET
    "hours" = "project_asset_usage"."hours" + EXCLUDED."hours",
    "logCount" = "project_asset_usage"."logCount" + 1,
    "lastLoggedAt" = GREATEST("project_asset_usage"."lastLoggedAt", EXCLUDED."lastLoggedAt");
  RETURN NULL;
END $$;

-- Logs are not edited or deleted by the API; should one be (by hand, or a later feature), the pairs it
-- touched are recomputed from meter_logs(projectId, assetId, ...) so the rollup never drifts.
CREATE FUNCTION "project_asset_usage_refresh"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  pair RECORD;
BEGIN
  FOR pair IN
    SELECT OLD."projectId" AS p, OLD."assetId" AS a WHERE OLD."projectId" IS NOT NULL
    UNION SELECT NEW."projectId", NEW."assetId" WHERE TG_OP = 'UPDATE' AND NEW."projectId" IS NOT NULL
  LOOP
    DELETE FROM "project_asset_usage" WHERE "projectId" = pair.p AND "assetId" = pair.a;
    INSERT INTO "project_asset_usage" ("projectId", "assetId", "orgId", "hours", "logCount", "lastLoggedAt")
    SELECT pair.p, pair.a, MIN("orgId"), SUM("delta"), COUNT(*), MAX("loggedAt")
    FROM "meter_logs" WHERE "projectId" = pair.p AND "assetId" = pair.a HAVING COUNT(*) > 0;
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER "meter_logs_project_usage_insert" AFTER INSERT ON "meter_logs"
  FOR EACH ROW WHEN (NEW."projectId" IS NOT NULL) EXECUTE FUNCTION "project_asset_usage_add"();
CREATE TRIGGER "meter_logs_project_usage_update" AFTER UPDATE OF "projectId", "assetId", "delta", "loggedAt" ON "meter_logs"
  FOR EACH ROW EXECUTE FUNCTION "project_asset_usage_refresh"();
CREATE TRIGGER "meter_logs_project_usage_delete" AFTER DELETE ON "meter_logs"
  FOR EACH ROW WHEN (OLD."projectId" IS NOT NULL) EXECUTE FUNCTION "project_asset_usage_refresh"();

-- The logs recorded before this migration.
INSERT INTO "project_asset_usage" ("projectId", "assetId", "orgId", "hours", "logCount", "lastLoggedAt")
SELECT "projectId", "assetId", MIN("orgId"), SUM("delta"), COUNT(*), MAX("loggedAt")
FROM "meter_logs" WHERE "projectId" IS NOT NULL GROUP BY "projectId", "assetId";

-- The endpoint no longer scans a project's logs, so the covering index of the first scale migration shrinks
-- to what the refresh trigger needs: a (project, asset) pair's logs.
DROP INDEX "meter_logs_projectId_assetId_orgId_loggedAt_delta_idx";
CREATE INDEX "meter_logs_projectId_assetId_idx" ON "meter_logs"("projectId", "assetId");
