-- CreateEnum
CREATE TYPE "AssetClass" AS ENUM ('on-road', 'off-road', 'trailer');

-- CreateEnum
CREATE TYPE "MeterType" AS ENUM ('HOURS', 'ODOMETER', 'NONE');

-- CreateEnum
CREATE TYPE "LifecycleStatus" AS ENUM ('IN_SERVICE', 'OUT_OF_SERVICE', 'ARCHIVED', 'SOLD');

-- CreateEnum
CREATE TYPE "DepreciationMethod" AS ENUM ('NONE', 'STRAIGHT_LINE', 'DECLINING_BALANCE');

-- CreateEnum
CREATE TYPE "ProjectStatus" AS ENUM ('ACTIVE', 'ON_HOLD', 'COMPLETED', 'ARCHIVED');

-- CreateEnum
CREATE TYPE "FlagSeverity" AS ENUM ('RED', 'YELLOW', 'AUTO_PM');

-- CreateEnum
CREATE TYPE "FlagStatus" AS ENUM ('OPEN', 'IN_PROGRESS', 'RESOLVED');

-- CreateEnum
CREATE TYPE "ReviewStatus" AS ENUM ('NONE', 'PENDING', 'APPROVED', 'REJECTED');

-- CreateEnum
CREATE TYPE "WorkOrderStatus" AS ENUM ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD', 'CANCELED', 'DONE');

-- CreateEnum
CREATE TYPE "WorkOrderPriority" AS ENUM ('LOW', 'NORMAL', 'HIGH', 'URGENT');

-- CreateEnum
CREATE TYPE "ToolStatus" AS ENUM ('GOOD', 'NEEDS_ATTENTION', 'BROKEN', 'MISSING', 'RETIRED');

-- CreateEnum
CREATE TYPE "ToolEventKind" AS ENUM ('CHECK_OUT', 'CHECK_IN', 'ASSIGNMENT', 'CONDITION_REPORT', 'FAILURE_REPORT', 'REPLACEMENT_REQUEST', 'REPAIR_LOGGED', 'AUDIT');

-- CreateEnum
CREATE TYPE "NotificationChannel" AS ENUM ('PUSH', 'EMAIL');

-- CreateEnum
CREATE TYPE "NotificationStatus" AS ENUM ('PENDING', 'SENT', 'FAILED');

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('PENDING', 'DELIVERED', 'FAILED', 'ABANDONED');

-- CreateTable
CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "workOrderSeq" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "removedAt" TIMESTAMPTZ(3),

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "createdById" TEXT,
    "label" TEXT NOT NULL,
    "keyHash" TEXT NOT NULL,
    "scopes" TEXT[] NOT NULL,
    "rateLimitPerMinute" INTEGER,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "assets" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "nickname" TEXT NOT NULL,
    "customerAssetNumber" TEXT,
    "assetClass" "AssetClass" NOT NULL,
    "vin" TEXT,
    "serial" TEXT,
    "meterType" "MeterType" NOT NULL,
    "meterUnit" TEXT NOT NULL,
    "lifecycleStatus" "LifecycleStatus" NOT NULL DEFAULT 'IN_SERVICE',
    "yardId" TEXT,
    "licensePlate" TEXT,
    "licenseState" TEXT,
    "registrationExpiresAt" TIMESTAMPTZ(3),
    "insuranceExpiresAt" TIMESTAMPTZ(3),
    "purchaseCost" DOUBLE PRECISION,
    "purchaseDate" TIMESTAMPTZ(3),
    "depreciationMethod" "DepreciationMethod" NOT NULL DEFAULT 'NONE',
    "usefulLifeYears" INTEGER,
    "currentValue" DOUBLE PRECISION,
    "soldAt" TIMESTAMPTZ(3),
    "soldPrice" DOUBLE PRECISION,
    "soldTo" TEXT,
    "pmInterval" DOUBLE PRECISION,
    "pmBaselineReading" DOUBLE PRECISION,
    "lastMeterReading" DOUBLE PRECISION,
    "lastMeterAt" TIMESTAMPTZ(3),
    "parentAssetId" TEXT,
    "primaryOperatorId" TEXT,
    "checkedOutToUserId" TEXT,
    "checkedOutToProjectId" TEXT,
    "checkedOutAt" TIMESTAMPTZ(3),
    "expectedReturnAt" TIMESTAMPTZ(3),
    "checkoutNote" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "assets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "yards" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "lat" DOUBLE PRECISION,
    "lng" DOUBLE PRECISION,
    "address" TEXT,
    "notes" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "yards_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "code" TEXT,
    "customerName" TEXT,
    "status" "ProjectStatus" NOT NULL DEFAULT 'ACTIVE',
    "startDate" TIMESTAMPTZ(3),
    "endDate" TIMESTAMPTZ(3),
    "hourlyRate" DOUBLE PRECISION,
    "notes" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "flags" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "assetId" TEXT NOT NULL,
    "severity" "FlagSeverity" NOT NULL,
    "status" "FlagStatus" NOT NULL DEFAULT 'OPEN',
    "note" TEXT,
    "photoUrl" TEXT,
    "raisedById" TEXT NOT NULL,
    "resolvedById" TEXT,
    "resolvedAt" TIMESTAMPTZ(3),
    "resolutionNote" TEXT,
    "returnToServiceConfirmed" BOOLEAN NOT NULL DEFAULT false,
    "lat" DOUBLE PRECISION,
    "lng" DOUBLE PRECISION,
    "accuracyM" DOUBLE PRECISION,
    "pmDueReading" DOUBLE PRECISION,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flags_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "meter_logs" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "assetId" TEXT NOT NULL,
    "projectId" TEXT,
    "loggedById" TEXT,
    "loggedByDeviceId" TEXT,
    "hoursReading" DOUBLE PRECISION NOT NULL,
    "delta" DOUBLE PRECISION NOT NULL,
    "state" TEXT,
    "fuelVolume" DOUBLE PRECISION,
    "fuelUnit" TEXT,
    "fuelCostTotal" DOUBLE PRECISION,
    "note" TEXT,
    "lat" DOUBLE PRECISION,
    "lng" DOUBLE PRECISION,
    "clientMutationId" TEXT,
    "reviewStatus" "ReviewStatus" NOT NULL DEFAULT 'NONE',
    "reviewReason" TEXT,
    "autoFlagId" TEXT,
    "loggedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "meter_logs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "work_orders" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "assetId" TEXT,
    "projectId" TEXT,
    "flagId" TEXT,
    "toolId" TEXT,
    "title" TEXT NOT NULL,
    "description" TEXT,
    "status" "WorkOrderStatus" NOT NULL DEFAULT 'OPEN',
    "priority" "WorkOrderPriority" NOT NULL DEFAULT 'NORMAL',
    "dueAt" TIMESTAMPTZ(3),
    "estimateLaborHours" DOUBLE PRECISION,
    "estimateCost" DOUBLE PRECISION,
    "createdById" TEXT NOT NULL,
    "assignedToId" TEXT,
    "completedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "work_orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "repairs" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "assetId" TEXT,
    "workOrderId" TEXT,
    "projectId" TEXT,
    "laborHours" DOUBLE PRECISION,
    "cost" DOUBLE PRECISION,
    "parts" TEXT,
    "notes" TEXT,
    "meta" JSONB NOT NULL DEFAULT '{}',
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "repairs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tools" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "category" TEXT,
    "makeModel" TEXT,
    "serial" TEXT,
    "purchaseDate" TIMESTAMPTZ(3),
    "purchaseCost" DOUBLE PRECISION,
    "supplier" TEXT,
    "warrantyEndDate" TIMESTAMPTZ(3),
    "isConsumable" BOOLEAN NOT NULL DEFAULT false,
    "stockLevel" INTEGER,
    "minStockLevel" INTEGER,
    "notes" TEXT,
    "parentKitId" TEXT,
    "assignedUserId" TEXT,
    "assignedVehicleId" TEXT,
    "assignedYardId" TEXT,
    "pmIntervalDays" INTEGER,
    "lastServicedAt" TIMESTAMPTZ(3),
    "status" "ToolStatus" NOT NULL DEFAULT 'GOOD',
    "scanToken" TEXT NOT NULL,
    "checkedOutToUserId" TEXT,
    "checkedOutVehicleId" TEXT,
    "checkedOutAssetId" TEXT,
    "checkedOutAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tools_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_events" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "toolId" TEXT NOT NULL,
    "kind" "ToolEventKind" NOT NULL,
    "condition" TEXT,
    "description" TEXT,
    "cost" DOUBLE PRECISION,
    "linkedAssetId" TEXT,
    "linkedWorkOrderId" TEXT,
    "photoId" TEXT,
    "actorId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notifications" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "channel" "NotificationChannel" NOT NULL,
    "kind" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "dedupeKey" TEXT,
    "status" "NotificationStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "sentAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_subscriptions" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[] NOT NULL,
    "description" TEXT,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "eventType" TEXT NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) DEFAULT CURRENT_TIMESTAMP,
    "leaseUntil" TIMESTAMPTZ(3),
    "lastAttemptAt" TIMESTAMPTZ(3),
    "deliveredAt" TIMESTAMPTZ(3),
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "organizations_slug_key" ON "organizations"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "users_orgId_email_key" ON "users"("orgId", "email");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_keyHash_key" ON "api_keys"("keyHash");

-- CreateIndex
CREATE INDEX "api_keys_orgId_idx" ON "api_keys"("orgId");

-- CreateIndex
CREATE INDEX "assets_orgId_createdAt_id_idx" ON "assets"("orgId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "assets_yardId_idx" ON "assets"("yardId");

-- CreateIndex
CREATE UNIQUE INDEX "yards_orgId_name_key" ON "yards"("orgId", "name");

-- CreateIndex
CREATE INDEX "projects_orgId_status_createdAt_id_idx" ON "projects"("orgId", "status", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "projects_orgId_code_key" ON "projects"("orgId", "code");

-- CreateIndex
CREATE INDEX "flags_orgId_status_createdAt_id_idx" ON "flags"("orgId", "status", "createdAt", "id");

-- CreateIndex
CREATE INDEX "flags_assetId_idx" ON "flags"("assetId");

-- CreateIndex
CREATE INDEX "meter_logs_orgId_loggedAt_id_idx" ON "meter_logs"("orgId", "loggedAt", "id");

-- CreateIndex
CREATE INDEX "meter_logs_assetId_loggedAt_idx" ON "meter_logs"("assetId", "loggedAt");

-- CreateIndex
CREATE INDEX "meter_logs_projectId_idx" ON "meter_logs"("projectId");

-- CreateIndex
CREATE UNIQUE INDEX "meter_logs_orgId_clientMutationId_key" ON "meter_logs"("orgId", "clientMutationId");

-- CreateIndex
CREATE INDEX "work_orders_orgId_status_idx" ON "work_orders"("orgId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "work_orders_orgId_number_key" ON "work_orders"("orgId", "number");

-- CreateIndex
CREATE INDEX "repairs_orgId_createdAt_id_idx" ON "repairs"("orgId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "repairs_assetId_idx" ON "repairs"("assetId");

-- CreateIndex
CREATE INDEX "repairs_workOrderId_idx" ON "repairs"("workOrderId");

-- CreateIndex
CREATE UNIQUE INDEX "tools_scanToken_key" ON "tools"("scanToken");

-- CreateIndex
CREATE INDEX "tools_orgId_name_id_idx" ON "tools"("orgId", "name", "id");

-- CreateIndex
CREATE INDEX "tools_parentKitId_idx" ON "tools"("parentKitId");

-- CreateIndex
CREATE INDEX "tools_assignedYardId_idx" ON "tools"("assignedYardId");

-- CreateIndex
CREATE INDEX "tool_events_toolId_createdAt_id_idx" ON "tool_events"("toolId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "notifications_status_createdAt_idx" ON "notifications"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "notifications_orgId_dedupeKey_key" ON "notifications"("orgId", "dedupeKey");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_orgId_createdAt_id_idx" ON "webhook_subscriptions"("orgId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "events_orgId_createdAt_idx" ON "events"("orgId", "createdAt");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_nextAttemptAt_idx" ON "webhook_deliveries"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscriptionId_createdAt_id_idx" ON "webhook_deliveries"("subscriptionId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_subscriptionId_eventId_key" ON "webhook_deliveries"("subscriptionId", "eventId");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "assets" ADD CONSTRAINT "assets_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "yards" ADD CONSTRAINT "yards_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "projects" ADD CONSTRAINT "projects_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "flags" ADD CONSTRAINT "flags_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "flags" ADD CONSTRAINT "flags_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "meter_logs" ADD CONSTRAINT "meter_logs_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "meter_logs" ADD CONSTRAINT "meter_logs_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "work_orders" ADD CONSTRAINT "work_orders_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "repairs" ADD CONSTRAINT "repairs_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tools" ADD CONSTRAINT "tools_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_events" ADD CONSTRAINT "tool_events_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_events" ADD CONSTRAINT "tool_events_toolId_fkey" FOREIGN KEY ("toolId") REFERENCES "tools"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
