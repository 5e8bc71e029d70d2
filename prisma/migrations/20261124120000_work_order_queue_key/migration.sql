-- Issue 11: GET /work-orders walks in constant time per page, as every other list does
-- (src/modules/work-orders/work-orders.queue.ts listWorkOrders).
--
-- The queue order mixes directions (priority DESC, "dueAt" ASC NULLS LAST, "createdAt" DESC, id DESC), so the
-- rows after a cursor were not one row-value range: they were read as up to four index ranges of a page each,
-- merged and cut (about three pages of index and heap reads per deep page against one for page 1). The due
-- date is now indexed as a key that sorts descending (the time left until a far-off instant; undated orders get
-- a value below any real one), so every key runs one way and "after the cursor" is one row-value comparison
-- `(priority, <due key>, "createdAt", id) < (...)` that starts the index scan at the cursor. The expression must
-- stay identical to dueKey() in work-orders.queue.ts, or the planner no longer matches these indexes.

-- GET /work-orders (the default active queue: all four active statuses at once).
DROP INDEX "work_orders_active_queue_idx";
CREATE INDEX "work_orders_active_queue_idx"
  ON "work_orders"("orgId", "priority" DESC,
    (COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - "dueAt", INTERVAL '-1000000 years')) DESC,
    "createdAt" DESC, "id" DESC)
  WHERE "status" IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD');

-- GET /work-orders?status=<subset> (e.g. DONE): one range per requested status.
DROP INDEX "work_orders_orgId_status_priority_dueAt_createdAt_id_idx";
CREATE INDEX "work_orders_status_queue_idx"
  ON "work_orders"("orgId", "status", "priority" DESC,
    (COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - "dueAt", INTERVAL '-1000000 years')) DESC,
    "createdAt" DESC, "id" DESC);
