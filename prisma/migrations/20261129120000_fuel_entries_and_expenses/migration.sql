-- Fuel entries and expenses, the cost records the cost reports add to meter-log fuel, work-order lines and repairs;
-- and the asset's salvage value, the floor of its depreciation schedule.

ALTER TABLE "assets" ADD COLUMN "salvageValue" NUMERIC(14,2) NOT NULL DEFAULT 0;

CREATE TABLE "fuel_entries" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "assetId" TEXT NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "fueledAt" TIMESTAMPTZ(3) NOT NULL,
    "volume" NUMERIC(14,4) NOT NULL,
    "unit" TEXT NOT NULL CHECK ("unit" IN ('GALLON', 'GALLON_UK', 'LITER')),
    -- The volume in litres, kept with the row so that sums over mixed units stay in the database.
    "volumeLiters" NUMERIC(20,9) NOT NULL,
    "totalCost" NUMERIC(14,2) NOT NULL,
    "pricePerUnit" NUMERIC(14,3) NOT NULL,
    "fuelType" TEXT,
    "vendorId" TEXT,
    "meterReading" DOUBLE PRECISION,
    -- The meter log the reading was recorded as (source fuel); null without a reading.
    "logId" TEXT,
    "void" BOOLEAN NOT NULL DEFAULT false,
    "partial" BOOLEAN NOT NULL DEFAULT false,
    "externalId" TEXT,
    "cardNumber" TEXT,
    "projectId" TEXT REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    "note" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "fuel_entries_orgId_externalId_key" ON "fuel_entries"("orgId", "externalId");
CREATE INDEX "fuel_entries_orgId_fueledAt_id_idx" ON "fuel_entries"("orgId", "fueledAt", "id");
CREATE INDEX "fuel_entries_orgId_assetId_fueledAt_id_idx" ON "fuel_entries"("orgId", "assetId", "fueledAt", "id");
CREATE INDEX "fuel_entries_orgId_projectId_fueledAt_id_idx" ON "fuel_entries"("orgId", "projectId", "fueledAt", "id");
CREATE INDEX "fuel_entries_orgId_logId_idx" ON "fuel_entries"("orgId", "logId");

CREATE TABLE "expenses" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "assetId" TEXT NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "type" TEXT NOT NULL CHECK ("type" IN ('insurance', 'registration', 'tolls', 'rental', 'tires', 'fines', 'other')),
    "amount" NUMERIC(14,2) NOT NULL,
    "incurredAt" TIMESTAMPTZ(3) NOT NULL,
    "vendorId" TEXT,
    "projectId" TEXT REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    "note" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "expenses_orgId_incurredAt_id_idx" ON "expenses"("orgId", "incurredAt", "id");
CREATE INDEX "expenses_orgId_assetId_incurredAt_id_idx" ON "expenses"("orgId", "assetId", "incurredAt", "id");
CREATE INDEX "expenses_orgId_projectId_incurredAt_id_idx" ON "expenses"("orgId", "projectId", "incurredAt", "id");
