-- Telematics: an organisation's ISO 15143-3 (AEMP 2.0) feeds, their sync runs, and the machines each feed lists
-- with their latest snapshot values. New tables only. The connection row carries the run lease (one run at a
-- time per connection across instances); secrets are stored sealed (v1:<key id>:<ciphertext>), never in clear.

CREATE TABLE "telematics_connections" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "standard" TEXT NOT NULL,
    "fleetUrl" TEXT NOT NULL,
    "authType" TEXT NOT NULL,
    "authTokenUrl" TEXT,
    "authClientId" TEXT,
    "authScope" TEXT,
    "authUsername" TEXT,
    "secretCiphertext" TEXT,
    "pollMinutes" INTEGER NOT NULL DEFAULT 15,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "consecutiveFailures" INTEGER NOT NULL DEFAULT 0,
    "failingNotified" BOOLEAN NOT NULL DEFAULT false,
    "lastRunAt" TIMESTAMPTZ(3),
    "lastSuccessAt" TIMESTAMPTZ(3),
    "lastError" TEXT,
    "nextRunAt" TIMESTAMPTZ(3),
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "telematics_connections_orgId_createdAt_id_idx" ON "telematics_connections"("orgId", "createdAt", "id");
-- The scheduler's question: enabled connections whose next run is due.
CREATE INDEX "telematics_connections_due_idx" ON "telematics_connections"("nextRunAt") WHERE "enabled";

CREATE TABLE "telematics_runs" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "connectionId" TEXT NOT NULL REFERENCES "telematics_connections"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "status" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "startedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMPTZ(3),
    "pages" INTEGER NOT NULL DEFAULT 0,
    "equipmentSeen" INTEGER NOT NULL DEFAULT 0,
    "matched" INTEGER NOT NULL DEFAULT 0,
    "unmatched" INTEGER NOT NULL DEFAULT 0,
    "readingsCreated" INTEGER NOT NULL DEFAULT 0,
    "readingsSkipped" INTEGER NOT NULL DEFAULT 0,
    "faultsOpened" INTEGER NOT NULL DEFAULT 0,
    "machineErrors" INTEGER NOT NULL DEFAULT 0,
    "errorSamples" JSONB NOT NULL DEFAULT '[]',
    "error" TEXT
);
CREATE INDEX "telematics_runs_connectionId_startedAt_id_idx" ON "telematics_runs"("connectionId", "startedAt", "id");

CREATE TABLE "telematics_equipment" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "connectionId" TEXT NOT NULL REFERENCES "telematics_connections"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "equipmentKey" TEXT NOT NULL,
    "pin" TEXT,
    "serialNumber" TEXT,
    "equipmentId" TEXT,
    "oemName" TEXT,
    "model" TEXT,
    "assetId" TEXT REFERENCES "assets"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    -- auto: matched by PIN/serial; manual: linked by PUT; none: unlinked by PUT (never auto-matched again).
    "linkMode" TEXT,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "lat" DOUBLE PRECISION,
    "lng" DOUBLE PRECISION,
    "locationAt" TIMESTAMPTZ(3),
    "operatingHours" DOUBLE PRECISION,
    "operatingHoursAt" TIMESTAMPTZ(3),
    "idleHours" DOUBLE PRECISION,
    "idleHoursAt" TIMESTAMPTZ(3),
    "odometer" DOUBLE PRECISION,
    "odometerUnit" TEXT,
    "odometerAt" TIMESTAMPTZ(3),
    "fuelUsed" DOUBLE PRECISION,
    "fuelUsedUnit" TEXT,
    "fuelUsedAt" TIMESTAMPTZ(3),
    "fuelRemainingPercent" DOUBLE PRECISION,
    "fuelRemainingAt" TIMESTAMPTZ(3),
    "defRemainingPercent" DOUBLE PRECISION,
    "defRemainingAt" TIMESTAMPTZ(3),
    "engineRunning" BOOLEAN,
    "engineRunningAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "telematics_equipment_connectionId_equipmentKey_key" ON "telematics_equipment"("connectionId", "equipmentKey");
-- An asset is fed by one machine per organisation.
CREATE UNIQUE INDEX "telematics_equipment_orgId_assetId_key" ON "telematics_equipment"("orgId", "assetId")
  WHERE "assetId" IS NOT NULL;
CREATE INDEX "telematics_equipment_assetId_idx" ON "telematics_equipment"("assetId");
