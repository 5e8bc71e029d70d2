-- migrate:no-transaction
-- Issue 27: the claim (src/delivery/claims.ts CLAIM_SQL) takes a subscription's due rows oldest first. Its
-- conditions (status PENDING or FAILED) match webhook_deliveries(subscriptionId, status, createdAt, id) too, and
-- while the table's statistics still describe a smaller queue (a burst of events, before autovacuum's next
-- ANALYZE) the planner picked that one: every claim then read the subscription's whole backlog and sorted it to
-- keep 64 rows (2,926 rows read and sorted per claim, 7.5 ms, with a backlog of 3,000; PostgreSQL used 230 µs of
-- CPU per delivery). This index holds the queue alone (finished rows leave it), in due order, so there is no
-- cheaper reading of the claim for the planner to choose, whatever the statistics: 64 rows read per claim, and
-- PostgreSQL at 110 µs per delivery. It replaces the full-table index of the same columns, which only the claim
-- used; finished rows no longer cost an entry in it. Built and dropped CONCURRENTLY: deliveries keep being
-- written throughout, and the previous release's claim reads the new index just as well.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_deliveries_queue_idx" ON "webhook_deliveries"("subscriptionId", "nextAttemptAt")
  WHERE "status" IN ('PENDING', 'FAILED');
DROP INDEX CONCURRENTLY IF EXISTS "webhook_deliveries_subscriptionId_nextAttemptAt_idx";
