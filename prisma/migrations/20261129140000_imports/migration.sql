-- Imports: a file of one type read into rows, validated (each row's predicted action) before anything is written,
-- committed in batches and rolled back within a day; and the saved column mappings they reuse.

CREATE TABLE "imports" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "type" TEXT NOT NULL CHECK ("type" IN ('assets', 'meter_readings', 'fuel_entries', 'parts', 'stock_counts', 'tools', 'vendors')),
    "status" TEXT NOT NULL CHECK ("status" IN ('validating', 'validated', 'committing', 'completed', 'partially_completed', 'failed', 'rolled_back')),
    "source" TEXT NOT NULL CHECK ("source" IN ('upload', 'attachment')),
    "uploadAttachmentId" TEXT,
    "mappingId" TEXT,
    "mapping" JSONB NOT NULL,
    "options" JSONB NOT NULL,
    -- The file's header row, as read; the error CSV repeats it.
    "headers" JSONB,
    "delimiter" TEXT,
    -- Every row of the file is stored: validation can start over after a restart.
    "readComplete" BOOLEAN NOT NULL DEFAULT false,
    "rowsTotal" INTEGER NOT NULL DEFAULT 0,
    "rowsDone" INTEGER NOT NULL DEFAULT 0,
    "counts" JSONB NOT NULL DEFAULT '{}',
    -- check (re-reading what commit would write) or write (writing; resumable row by row).
    "commitPhase" TEXT,
    "failureReason" TEXT,
    "createdByKeyId" TEXT NOT NULL,
    "committedByKeyId" TEXT,
    "actorId" TEXT,
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "validatedAt" TIMESTAMPTZ(3),
    "committedAt" TIMESTAMPTZ(3),
    "completedAt" TIMESTAMPTZ(3),
    "rolledBackAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "imports_orgId_createdAt_id_idx" ON "imports"("orgId", "createdAt", "id");
-- One commit at a time per organisation and type: a second is refused while the first runs.
CREATE UNIQUE INDEX "imports_orgId_type_committing_key" ON "imports"("orgId", "type") WHERE "status" = 'committing';
-- The resume sweep reads only the imports in progress.
CREATE INDEX "imports_status_leaseUntil_idx" ON "imports"("status", "leaseUntil") WHERE "status" IN ('validating', 'committing');

CREATE TABLE "import_rows" (
    "orgId" TEXT NOT NULL,
    "importId" TEXT NOT NULL REFERENCES "imports"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    -- The line of the file the row starts on (the header is line 1).
    "rowNumber" INTEGER NOT NULL,
    "raw" JSONB NOT NULL,
    "values" JSONB,
    -- What identifies the row's record (its match key), to find duplicates in the file.
    "key" TEXT,
    "action" TEXT NOT NULL DEFAULT 'pending' CHECK ("action" IN ('pending', 'create', 'update', 'unchanged', 'error')),
    "targetId" TEXT,
    "errorCode" TEXT,
    "errorColumn" TEXT,
    "errorValue" TEXT,
    "errorMessage" TEXT,
    "written" BOOLEAN NOT NULL DEFAULT false,
    "resultId" TEXT,
    -- For rollback: the fields an update changed, as they were, and the record's updatedAt after the write.
    "prior" JSONB,
    "writtenUpdatedAt" TIMESTAMPTZ(3),
    PRIMARY KEY ("orgId", "importId", "rowNumber")
);
CREATE INDEX "import_rows_orgId_importId_errors_idx" ON "import_rows"("orgId", "importId", "rowNumber") WHERE "action" = 'error';

CREATE TABLE "import_mappings" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "mapping" JSONB NOT NULL,
    "options" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "import_mappings_orgId_name_key" ON "import_mappings"("orgId", "name");
CREATE INDEX "import_mappings_orgId_createdAt_id_idx" ON "import_mappings"("orgId", "createdAt", "id");
