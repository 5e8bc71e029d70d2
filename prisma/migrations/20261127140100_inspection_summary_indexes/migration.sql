-- migrate:no-transaction
-- The fleet inspection summary pages through an organisation's assets by id. Built CONCURRENTLY: assets keep
-- being written while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "assets_orgId_id_idx" ON "assets"("orgId", "id");
