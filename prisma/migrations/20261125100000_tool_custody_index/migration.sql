-- Issue 11: GET /tools/{id}/utilization (src/modules/tools/tools.activity.ts UTILIZATION_SQL) reads a tool's
-- custody events (CHECK_OUT, CHECK_IN) in time order over a window of up to 365 days. Through
-- tool_events(toolId, createdAt, id) it fetched every event's row from the heap (a bitmap scan of 2,500 rows for
-- the scale benchmark's busy tool) and sorted them twice: 8 ms of a 12 ms query. This partial index holds only
-- custody events and carries the columns the query reads, so the window is one index-only range scan, already
-- in the order the query's lead() needs.
CREATE INDEX "tool_events_custody_idx" ON "tool_events"("toolId", "createdAt", "id")
  INCLUDE ("kind", "holderUserId", "orgId")
  WHERE "kind" IN ('CHECK_OUT', 'CHECK_IN');
