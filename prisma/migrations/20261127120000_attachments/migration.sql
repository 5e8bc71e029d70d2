-- Attachments: files (photos, documents) on assets, flags, work orders, repairs and tools. The subject is
-- polymorphic (no foreign key can name five tables), so a trigger on each subject table deletes the rows of a
-- deleted subject, cascades included; the bytes left without a row are removed by the attachments sweep.

CREATE TYPE "AttachmentStatus" AS ENUM ('PENDING', 'READY');

CREATE TABLE "attachments" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "subjectType" TEXT NOT NULL CHECK ("subjectType" IN ('asset', 'flag', 'work_order', 'repair', 'tool')),
    "subjectId" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "contentType" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT,
    "expectedSha256" TEXT,
    "caption" TEXT,
    "status" "AttachmentStatus" NOT NULL DEFAULT 'PENDING',
    "storageKey" TEXT,
    "uploadClaimedAt" TIMESTAMPTZ(3),
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "attachments_orgId_subjectType_subjectId_createdAt_id_idx"
    ON "attachments"("orgId", "subjectType", "subjectId", "createdAt", "id");
CREATE INDEX "attachments_status_createdAt_idx" ON "attachments"("status", "createdAt");
CREATE INDEX "attachments_storageKey_idx" ON "attachments"("storageKey");

CREATE FUNCTION "attachments_delete_subject"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "attachments" WHERE "subjectType" = TG_ARGV[0] AND "subjectId" = OLD."id";
    RETURN NULL;
END;
$$;

CREATE TRIGGER "assets_delete_attachments" AFTER DELETE ON "assets"
    FOR EACH ROW EXECUTE FUNCTION "attachments_delete_subject"('asset');
CREATE TRIGGER "flags_delete_attachments" AFTER DELETE ON "flags"
    FOR EACH ROW EXECUTE FUNCTION "attachments_delete_subject"('flag');
CREATE TRIGGER "work_orders_delete_attachments" AFTER DELETE ON "work_orders"
    FOR EACH ROW EXECUTE FUNCTION "attachments_delete_subject"('work_order');
CREATE TRIGGER "repairs_delete_attachments" AFTER DELETE ON "repairs"
    FOR EACH ROW EXECUTE FUNCTION "attachments_delete_subject"('repair');
CREATE TRIGGER "tools_delete_attachments" AFTER DELETE ON "tools"
    FOR EACH ROW EXECUTE FUNCTION "attachments_delete_subject"('tool');
