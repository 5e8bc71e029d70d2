-- migrate:no-transaction
-- The cost reports sum the fuel recorded on meter logs over a period: this partial index holds only those logs (a
-- small share of all readings, spread over every page of the table) with the columns the sums and the fuel economy
-- read, so the reports scan it alone (index-only). Built CONCURRENTLY: meter logs keep being written while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "meter_logs_orgId_fuel_loggedAt_idx"
    ON "meter_logs"("orgId", "loggedAt")
    INCLUDE ("assetId", "projectId", "fuelVolume", "fuelUnit", "fuelCostTotal", "hoursReading", "reviewStatus", "source", "id")
    WHERE "fuelVolume" IS NOT NULL OR "fuelCostTotal" IS NOT NULL;
