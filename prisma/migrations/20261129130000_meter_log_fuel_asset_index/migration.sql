-- migrate:no-transaction
-- The meter logs that carry fuel in asset and time order, with every column the cost reports read of them: the fuel
-- economy's per-asset lookups (its first and last closing fill of a period, and the few fills outside them) and one
-- asset's meter-log fuel read it alone (index-only), so an asset whose readings carry no fuel costs one index
-- descent, not a walk through its readings. Built CONCURRENTLY: meter logs keep being written while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "meter_logs_orgId_assetId_fuel_loggedAt_idx"
    ON "meter_logs"("orgId", "assetId", "loggedAt", "id")
    INCLUDE ("projectId", "fuelVolume", "fuelUnit", "fuelCostTotal", "hoursReading", "reviewStatus", "source")
    WHERE "fuelVolume" IS NOT NULL OR "fuelCostTotal" IS NOT NULL;
