-- Inspections: forms whose items are versioned (a version is never changed once written, so a submission keeps
-- the checklist it answered), submissions with one result per answered item, the flags each submission opened or
-- added to, and one summary row per inspected asset that the fleet view reads instead of scanning inspections.

CREATE TYPE "InspectionFormStatus" AS ENUM ('ACTIVE', 'ARCHIVED');
CREATE TYPE "InspectionResult" AS ENUM ('PASS', 'FAIL');
CREATE TYPE "InspectionReviewOutcome" AS ENUM ('defects_corrected', 'no_correction_needed');

CREATE TABLE "inspection_forms" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "assetClasses" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "outOfServiceOnCriticalFailure" BOOLEAN NOT NULL DEFAULT true,
    "template" TEXT,
    "currentVersion" INTEGER NOT NULL DEFAULT 1,
    "status" "InspectionFormStatus" NOT NULL DEFAULT 'ACTIVE',
    "archivedAt" TIMESTAMPTZ(3),
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "inspection_forms_orgId_status_createdAt_id_idx"
    ON "inspection_forms"("orgId", "status", "createdAt", "id");

CREATE TABLE "inspection_form_versions" (
    "formId" TEXT NOT NULL REFERENCES "inspection_forms"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "version" INTEGER NOT NULL,
    "items" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY ("formId", "version")
);

CREATE TABLE "inspections" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "assetId" TEXT NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "formId" TEXT NOT NULL,
    "formVersion" INTEGER NOT NULL,
    "inspectedAt" TIMESTAMPTZ(3) NOT NULL,
    "inspectorName" TEXT,
    "result" "InspectionResult" NOT NULL,
    "failedItems" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "signatureName" TEXT,
    "signedAt" TIMESTAMPTZ(3),
    "logId" TEXT,
    "outOfServiceAt" TIMESTAMPTZ(3),
    "returnedToServiceAt" TIMESTAMPTZ(3),
    "reviewOutcome" "InspectionReviewOutcome",
    "reviewNote" TEXT,
    "reviewedBy" TEXT,
    "reviewedById" TEXT,
    "reviewedAt" TIMESTAMPTZ(3),
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY ("formId", "formVersion") REFERENCES "inspection_form_versions"("formId", "version")
        ON DELETE CASCADE ON UPDATE CASCADE
);
-- One index per list filter, each in the list's order (newest inspectedAt first).
CREATE INDEX "inspections_orgId_inspectedAt_id_idx" ON "inspections"("orgId", "inspectedAt", "id");
CREATE INDEX "inspections_orgId_result_inspectedAt_id_idx" ON "inspections"("orgId", "result", "inspectedAt", "id");
CREATE INDEX "inspections_assetId_inspectedAt_id_idx" ON "inspections"("assetId", "inspectedAt", "id");
CREATE INDEX "inspections_formId_inspectedAt_id_idx" ON "inspections"("formId", "inspectedAt", "id");

CREATE TABLE "inspection_results" (
    "inspectionId" TEXT NOT NULL REFERENCES "inspections"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "itemKey" TEXT NOT NULL,
    "pass" BOOLEAN,
    "value" JSONB,
    "note" TEXT,
    "failed" BOOLEAN NOT NULL,
    "attachmentIds" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    PRIMARY KEY ("inspectionId", "itemKey")
);

-- The flags a submission opened (opened) or added itself to (an open flag for the same form item).
CREATE TABLE "inspection_flags" (
    "inspectionId" TEXT NOT NULL REFERENCES "inspections"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "flagId" TEXT NOT NULL REFERENCES "flags"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "itemKey" TEXT NOT NULL,
    "opened" BOOLEAN NOT NULL,
    PRIMARY KEY ("inspectionId", "flagId")
);
CREATE INDEX "inspection_flags_flagId_idx" ON "inspection_flags"("flagId");

-- The latest inspection of each asset, written by the submission that is (by inspectedAt) the latest.
CREATE TABLE "asset_inspection_summaries" (
    "assetId" TEXT NOT NULL PRIMARY KEY REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "lastInspectionId" TEXT NOT NULL,
    "lastInspectedAt" TIMESTAMPTZ(3) NOT NULL,
    "lastResult" "InspectionResult" NOT NULL
);

-- The inspection that opened a flag; nullable and without a foreign key, so adding it never rewrites or scans
-- flags (inspection_flags holds the checked links).
ALTER TABLE "flags" ADD COLUMN "inspectionId" TEXT;
