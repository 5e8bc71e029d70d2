-- Issue 11: GET /work-orders?assetId=... and ?assignedToId=... read the asset's or the assignee's orders in
-- queue order, the cursor one row-value range on the queue keys (the due date as the descending key of
-- 20261124120000_work_order_queue_key; src/modules/work-orders/work-orders.queue.ts). Without them the filter
-- fell back to a sequential scan of every organisation's orders (63,730 rows removed by the filter, 22 ms on the
-- scale benchmark's database) or a walk of the whole organisation's queue. The status set and orgId are checked
-- on the rows found: at most that asset's or that person's own orders.

CREATE INDEX "work_orders_asset_queue_idx"
  ON "work_orders"("assetId", "priority" DESC,
    (COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - "dueAt", INTERVAL '-1000000 years')) DESC,
    "createdAt" DESC, "id" DESC);

CREATE INDEX "work_orders_assignee_queue_idx"
  ON "work_orders"("assignedToId", "priority" DESC,
    (COALESCE(TIMESTAMPTZ '9999-12-31 00:00:00+00' - "dueAt", INTERVAL '-1000000 years')) DESC,
    "createdAt" DESC, "id" DESC);
