-- Issue 28: service programs. Preventive maintenance by meter and by calendar: a catalogue of service tasks,
-- reminders per asset (each with its materialised status and urgency key), their service history, programs
-- that apply reminders to many assets, and the reminders a work order covers. New tables only.

CREATE TYPE "ServiceReminderStatus" AS ENUM ('OK', 'DUE_SOON', 'OVERDUE', 'SNOOZED');

CREATE TABLE "service_tasks" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "service_tasks_orgId_name_id_idx" ON "service_tasks"("orgId", "name", "id");

CREATE TABLE "service_programs" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "autoWorkOrder" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "service_programs_orgId_createdAt_id_idx" ON "service_programs"("orgId", "createdAt", "id");

CREATE TABLE "service_program_items" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "programId" TEXT NOT NULL REFERENCES "service_programs"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "serviceTaskId" TEXT NOT NULL REFERENCES "service_tasks"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    "position" INTEGER NOT NULL,
    "meterInterval" DOUBLE PRECISION,
    "dayInterval" INTEGER,
    "dueSoonMeter" DOUBLE PRECISION,
    "dueSoonDays" INTEGER
);
CREATE INDEX "service_program_items_programId_position_idx" ON "service_program_items"("programId", "position");
CREATE INDEX "service_program_items_serviceTaskId_idx" ON "service_program_items"("serviceTaskId");

CREATE TABLE "service_program_assets" (
    "programId" TEXT NOT NULL REFERENCES "service_programs"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "assetId" TEXT NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "orgId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY ("programId", "assetId")
);
CREATE INDEX "service_program_assets_assetId_idx" ON "service_program_assets"("assetId");

CREATE TABLE "service_reminders" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "assetId" TEXT NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "serviceTaskId" TEXT NOT NULL REFERENCES "service_tasks"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    "serviceProgramId" TEXT REFERENCES "service_programs"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    "serviceProgramItemId" TEXT REFERENCES "service_program_items"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    "meterInterval" DOUBLE PRECISION,
    "dayInterval" INTEGER,
    "dueSoonMeter" DOUBLE PRECISION,
    "dueSoonDays" INTEGER,
    "lastCompletedReading" DOUBLE PRECISION,
    "lastCompletedAt" TIMESTAMPTZ(3),
    "nextDueReading" DOUBLE PRECISION,
    "nextDueAt" TIMESTAMPTZ(3),
    "snoozedUntil" TIMESTAMPTZ(3),
    "snoozedUntilReading" DOUBLE PRECISION,
    "status" "ServiceReminderStatus" NOT NULL DEFAULT 'OK',
    "statusRank" INTEGER NOT NULL,
    "dueKey" TIMESTAMPTZ(3) NOT NULL,
    "meterStatus" "ServiceReminderStatus",
    "meterDueAt" TIMESTAMPTZ(3),
    "meterAlertAt" DOUBLE PRECISION,
    "nextCheckAt" TIMESTAMPTZ(3),
    "suspended" BOOLEAN NOT NULL DEFAULT false,
    "cycle" INTEGER NOT NULL DEFAULT 1,
    "dueSoonNotified" BOOLEAN NOT NULL DEFAULT false,
    "overdueNotified" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "service_reminders_serviceProgramItemId_assetId_key"
  ON "service_reminders"("serviceProgramItemId", "assetId");
-- GET /service-reminders: most urgent first, one index range per requested status rank (reminders of archived
-- and sold assets are out of the list, hence partial). The filtered lists have an index each in the same order.
CREATE INDEX "service_reminders_urgency_idx"
  ON "service_reminders"("orgId", "statusRank", "dueKey", "id") WHERE NOT "suspended";
CREATE INDEX "service_reminders_asset_urgency_idx"
  ON "service_reminders"("assetId", "statusRank", "dueKey", "id") WHERE NOT "suspended";
CREATE INDEX "service_reminders_task_urgency_idx"
  ON "service_reminders"("serviceTaskId", "statusRank", "dueKey", "id") WHERE NOT "suspended";
CREATE INDEX "service_reminders_program_urgency_idx"
  ON "service_reminders"("serviceProgramId", "statusRank", "dueKey", "id") WHERE NOT "suspended";
-- POST /hours: "does this reading change any reminder of the asset?" is one probe of this index.
CREATE INDEX "service_reminders_meter_alert_idx"
  ON "service_reminders"("assetId", "meterAlertAt") WHERE "meterAlertAt" IS NOT NULL AND NOT "suspended";
-- The calendar sweep: the reminders whose next calendar change has come, oldest first, a bounded batch.
CREATE INDEX "service_reminders_calendar_idx"
  ON "service_reminders"("nextCheckAt") WHERE "nextCheckAt" IS NOT NULL AND NOT "suspended";

CREATE TABLE "service_completions" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "reminderId" TEXT NOT NULL REFERENCES "service_reminders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "cycle" INTEGER NOT NULL,
    "completedAt" TIMESTAMPTZ(3) NOT NULL,
    "reading" DOUBLE PRECISION,
    "workOrderId" TEXT,
    "note" TEXT,
    "completedById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "service_completions_reminderId_completedAt_id_idx"
  ON "service_completions"("reminderId", "completedAt", "id");

CREATE TABLE "work_order_service_reminders" (
    "workOrderId" TEXT NOT NULL REFERENCES "work_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "reminderId" TEXT NOT NULL REFERENCES "service_reminders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "orgId" TEXT NOT NULL,
    "cycle" INTEGER,
    PRIMARY KEY ("workOrderId", "reminderId")
);
-- One automatic work order per reminder cycle ("never two"); links made by hand carry no cycle.
CREATE UNIQUE INDEX "work_order_service_reminders_reminderId_cycle_key"
  ON "work_order_service_reminders"("reminderId", "cycle");
