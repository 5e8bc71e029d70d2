-- Secret rotation with overlap: the replaced secret keeps signing (beside the new one) until it expires.
ALTER TABLE "webhook_subscriptions" ADD COLUMN "previousSecret" TEXT;
ALTER TABLE "webhook_subscriptions" ADD COLUMN "previousSecretExpiresAt" TIMESTAMPTZ(3);

-- Why and when a subscription stopped (automatic disabling of a failing endpoint, or a pause through the API).
ALTER TABLE "webhook_subscriptions" ADD COLUMN "disabledReason" TEXT;
ALTER TABLE "webhook_subscriptions" ADD COLUMN "disabledAt" TIMESTAMPTZ(3);

-- Endpoint health, kept by the outcome writer: the first failed attempt since the last success (null while
-- healthy) and the latest failed attempt. The auto-disable job reads them through the index below.
ALTER TABLE "webhook_subscriptions" ADD COLUMN "failingSince" TIMESTAMPTZ(3);
ALTER TABLE "webhook_subscriptions" ADD COLUMN "lastFailureAt" TIMESTAMPTZ(3);
CREATE INDEX "webhook_subscriptions_failingSince_idx" ON "webhook_subscriptions"("failingSince");

-- Resends and recovers re-queue the same delivery row (its id is the envelope id receivers deduplicate on);
-- each re-queue is logged here: when, how, by whom, and the status and attempts it replaced.
ALTER TABLE "webhook_deliveries" ADD COLUMN "requeues" JSONB NOT NULL DEFAULT '[]';
