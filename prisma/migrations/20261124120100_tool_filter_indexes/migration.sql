-- Issue 11: GET /tools filtered by category, assignee, vehicle or kit reads an index in the list's order
-- (name, id) with the filter leading, so a page is one range that starts at the cursor
-- (src/modules/tools/tools.repository.ts findToolPage and the CSV export). Without them a rare category or an
-- assignee's few tools were found by reading every tool of every organisation (a sequential scan: 50 ms and
-- 62,500 rows removed by the filter on the scale benchmark's database), and a common one by walking the whole
-- organisation's name index past the rows of other categories.

-- GET /tools?category=...
CREATE INDEX "tools_orgId_category_name_id_idx" ON "tools"("orgId", "category", "name", "id");

-- GET /tools?assignedUserId=... and ?assignedVehicleId=... (ids are unique across organisations; orgId is
-- checked on the rows found).
CREATE INDEX "tools_assignedUserId_name_id_idx" ON "tools"("assignedUserId", "name", "id");
CREATE INDEX "tools_assignedVehicleId_name_id_idx" ON "tools"("assignedVehicleId", "name", "id");

-- GET /tools?parentKitId=... in name order; also a kit's members (tools.custody.ts). Supersedes (parentKitId).
DROP INDEX "tools_parentKitId_idx";
CREATE INDEX "tools_parentKitId_name_id_idx" ON "tools"("parentKitId", "name", "id");
