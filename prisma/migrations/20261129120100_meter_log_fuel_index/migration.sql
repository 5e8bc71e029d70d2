-- migrate:no-transaction
-- The cost reports sum the fuel recorded on meter logs over a period: this partial index holds only those logs, a
-- small share of all readings. Built CONCURRENTLY: meter logs keep being written while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "meter_logs_orgId_fuel_loggedAt_idx"
    ON "meter_logs"("orgId", "loggedAt")
    WHERE "fuelVolume" IS NOT NULL OR "fuelCostTotal" IS NOT NULL;
