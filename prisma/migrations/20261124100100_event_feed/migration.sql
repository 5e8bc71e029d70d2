-- GET /events lists an organisation's events newest first, ("createdAt", id) descending, resuming from its
-- cursor with a row-value comparison: this index matches that order exactly (read backwards), so a page
-- reads its own rows and no more at any depth. It covers every use of the (orgId, createdAt) index it
-- replaces.
CREATE INDEX "events_orgId_createdAt_id_idx" ON "events"("orgId", "createdAt", "id");
DROP INDEX "events_orgId_createdAt_idx";

-- GET /events?type=a,b: one range of this index per requested type, each cut to the page, merged (the same
-- split the other lists use), so a rare type never walks the organisation's other events.
CREATE INDEX "events_orgId_type_createdAt_id_idx" ON "events"("orgId", "type", "createdAt", "id");
