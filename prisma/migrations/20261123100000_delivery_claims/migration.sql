-- Short renewed leases name their holder, so a restarting instance can free its own stale claims.
ALTER TABLE "webhook_deliveries" ADD COLUMN "claimedBy" TEXT;

-- Serves the per-subscription claim (due rows oldest first) without sorting the backlog.
CREATE INDEX "webhook_deliveries_subscriptionId_nextAttemptAt_idx" ON "webhook_deliveries"("subscriptionId", "nextAttemptAt");
