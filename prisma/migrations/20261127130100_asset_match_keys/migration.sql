-- migrate:no-transaction
-- Telematics matching (src/modules/telematics/telematics.repository.ts matchCandidates) looks a feed page's PINs and
-- serial numbers up among the organisation's assets by vin and serial, trimmed and case-insensitive. Without these
-- keys every page of a feed read all of the organisation's assets (a page of 100 machines against 105,000 assets:
-- a sequential scan, 70 to 100 ms, 200 ms when its estimate set off JIT compilation); with them it is one lookup per
-- value in each index (5 to 12 ms). The expressions must stay identical to the query's, or the planner no longer
-- matches these indexes; test/db/telematics-plans.test.ts checks that it uses them.
--
-- Not partial (WHERE vin IS NOT NULL): the planner ignores the expression statistics of a partial index, so it
-- priced each of a page's values at a default share of the organisation and chose the sequential scan for a page
-- of 200 values. Full indexes give it the statistics of the expressions.
--
-- Built CONCURRENTLY: assets keep being written throughout; the previous release never reads them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "assets_orgId_vin_match_idx" ON "assets"("orgId", (lower(btrim("vin"))));
CREATE INDEX CONCURRENTLY IF NOT EXISTS "assets_orgId_serial_match_idx" ON "assets"("orgId", (lower(btrim("serial"))));

-- GET /telematics/connections/{id}/equipment?matched=true|false reads its own rows in key order, starting at the
-- cursor, instead of walking the connection's every machine past those of the other kind.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "telematics_equipment_matched_idx" ON "telematics_equipment"("connectionId", "equipmentKey")
  WHERE "assetId" IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS "telematics_equipment_unmatched_idx" ON "telematics_equipment"("connectionId", "equipmentKey")
  WHERE "assetId" IS NULL;
