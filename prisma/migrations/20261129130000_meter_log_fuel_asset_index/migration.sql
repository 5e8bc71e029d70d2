-- migrate:no-transaction
-- The fuel economy of the cost reports looks up, per asset, its first and last closing fill of a period and the few
-- fills outside them: this partial index holds the meter logs that carry fuel in asset and time order, with the
-- columns those lookups read (index-only), so an asset whose readings carry no fuel costs one index descent and not a
-- walk through all its readings. Built CONCURRENTLY: meter logs keep being written while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "meter_logs_orgId_assetId_fuel_loggedAt_idx"
    ON "meter_logs"("orgId", "assetId", "loggedAt", "id")
    INCLUDE ("fuelVolume", "fuelUnit", "hoursReading", "reviewStatus", "source")
    WHERE "fuelVolume" IS NOT NULL OR "fuelCostTotal" IS NOT NULL;
