-- Issue 11: every list reads an index whose columns match its filters and order, so a page costs the
-- same at any depth. Each index names the query it serves; indexes it supersedes are dropped.

-- GET /hours?reviewStatus=PENDING (the review queue) and any review-status subset: one range per status
-- (src/modules/hours/hours.repository.ts listMeterLogs).
CREATE INDEX "meter_logs_orgId_reviewStatus_loggedAt_id_idx" ON "meter_logs"("orgId", "reviewStatus", "loggedAt", "id");

-- GET /hours?assetId=...: (loggedAt, id) < cursor on the asset's logs; also the asset's latest reading.
-- Supersedes (assetId, loggedAt).
DROP INDEX "meter_logs_assetId_loggedAt_idx";
CREATE INDEX "meter_logs_assetId_loggedAt_id_idx" ON "meter_logs"("assetId", "loggedAt", "id");

-- GET /projects/{id}/equipment-usage: per-asset sums of a project's logs as an index-only scan
-- (src/modules/projects/project-usage.ts). Supersedes (projectId).
DROP INDEX "meter_logs_projectId_idx";
CREATE INDEX "meter_logs_projectId_assetId_orgId_loggedAt_delta_idx" ON "meter_logs"("projectId", "assetId", "orgId", "loggedAt", "delta");

-- GET /flags?assetId=...: one status range per requested status on the asset's flags. Supersedes (assetId).
DROP INDEX "flags_assetId_idx";
CREATE INDEX "flags_assetId_status_createdAt_id_idx" ON "flags"("assetId", "status", "createdAt", "id");

-- GET /repairs?assetId=... and ?projectId=... newest first; equipment-usage's repair cost by project.
-- Supersedes repairs(assetId).
DROP INDEX "repairs_assetId_idx";
CREATE INDEX "repairs_assetId_createdAt_id_idx" ON "repairs"("assetId", "createdAt", "id");
CREATE INDEX "repairs_projectId_createdAt_id_idx" ON "repairs"("projectId", "createdAt", "id");

-- GET /work-orders?status=<subset> (e.g. DONE): one range per status in queue order
-- (src/modules/work-orders/work-orders.queue.ts). Supersedes (orgId, status).
DROP INDEX "work_orders_orgId_status_idx";
CREATE INDEX "work_orders_orgId_status_priority_dueAt_createdAt_id_idx"
  ON "work_orders"("orgId", "status", "priority" DESC, "dueAt" ASC NULLS LAST, "createdAt" DESC, "id" DESC);

-- GET /work-orders (the default active queue, all four active statuses at once) in queue order. Partial:
-- Prisma's schema cannot state the predicate; the drift test checks the columns.
CREATE INDEX "work_orders_active_queue_idx"
  ON "work_orders"("orgId", "priority" DESC, "dueAt" ASC NULLS LAST, "createdAt" DESC, "id" DESC)
  WHERE "status" IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD');

-- GET /tools?lowStock=true in name order: only the consumables at or below their threshold (the fallback 5
-- is LOW_STOCK_FALLBACK, written literally in src/modules/tools/tools.query.ts so the planner can match it).
CREATE INDEX "tools_low_stock_idx" ON "tools"("orgId", "name", "id", "stockLevel")
  WHERE "isConsumable" AND "stockLevel" IS NOT NULL AND "stockLevel" <= COALESCE("minStockLevel", 5);

-- GET /tools?pmOverdue=true in name order: only tools with a PM interval (the elapsed test needs now()).
CREATE INDEX "tools_pm_tracked_idx" ON "tools"("orgId", "name", "id", "pmIntervalDays") WHERE "pmIntervalDays" > 0;

-- GET /tools?warrantyExpiringDays=N: the warranty window as a range.
CREATE INDEX "tools_orgId_warrantyEndDate_idx" ON "tools"("orgId", "warrantyEndDate");

-- equipment-usage: tools riding along with assets checked out to the project.
CREATE INDEX "tools_checkedOutAssetId_idx" ON "tools"("checkedOutAssetId");
CREATE INDEX "tools_checkedOutVehicleId_idx" ON "tools"("checkedOutVehicleId");

-- equipment-usage: assets checked out to the project now.
CREATE INDEX "assets_checkedOutToProjectId_idx" ON "assets"("checkedOutToProjectId");

-- GET /webhooks/{id}/deliveries?status=<subset>: one range per status.
CREATE INDEX "webhook_deliveries_subscriptionId_status_createdAt_id_idx" ON "webhook_deliveries"("subscriptionId", "status", "createdAt", "id");
