-- migrate:no-transaction
-- GET /yards/{id} counts the yard's assets and tools in its one statement (src/modules/yards/yards.repository.ts).
-- On the yardId and assignedYardId indexes alone each counted row cost a visit to the table for its orgId (2,000
-- heap pages for a yard of 2,000 assets); led by orgId, the counts are index-only scans. The single-column indexes
-- stay: a yard's deletion sets its assets' and tools' references to null by yardId alone.
--
-- Built CONCURRENTLY: assets and tools keep being written throughout; the previous release never reads them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "assets_orgId_yardId_idx" ON "assets"("orgId", "yardId");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "tools_orgId_assignedYardId_idx" ON "tools"("orgId", "assignedYardId");
