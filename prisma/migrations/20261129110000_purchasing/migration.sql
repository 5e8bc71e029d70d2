-- Purchasing: vendors, purchase orders with their lines, and one row per receipt. Stock, the ledger and cost layers
-- belong to the parts tables; a receipt here records what was received and which ledger entries it wrote.

ALTER TABLE "organizations" ADD COLUMN "purchaseOrderSeq" INTEGER NOT NULL DEFAULT 0;

CREATE TYPE "PurchaseOrderStatus" AS ENUM (
    'DRAFT', 'SUBMITTED', 'APPROVED', 'REJECTED', 'PARTIALLY_RECEIVED', 'RECEIVED', 'CLOSED', 'CANCELLED'
);

CREATE TABLE "vendors" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "address" TEXT,
    "accountNumber" TEXT,
    "notes" TEXT,
    "archivedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- A name is taken once per organisation among vendors in use, whatever its case; archived vendors free their name.
CREATE UNIQUE INDEX "vendors_orgId_name_active_key" ON "vendors"("orgId", lower("name")) WHERE "archivedAt" IS NULL;
-- The list: alphabetical, case-folded, then id.
CREATE INDEX "vendors_orgId_name_idx" ON "vendors"("orgId", lower("name"), "id");

CREATE TABLE "purchase_orders" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "number" INTEGER NOT NULL,
    "status" "PurchaseOrderStatus" NOT NULL DEFAULT 'DRAFT',
    "vendorId" TEXT REFERENCES "vendors"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    "yardId" TEXT REFERENCES "yards"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    -- The sum of the line totals, kept with the lines (they change only in DRAFT, all at once), so lists add nothing.
    "subtotal" NUMERIC(14,2) NOT NULL DEFAULT 0,
    "shippingCost" NUMERIC(14,2) NOT NULL DEFAULT 0,
    "taxTotal" NUMERIC(14,2) NOT NULL DEFAULT 0,
    "notes" TEXT,
    "createdById" TEXT,
    "submittedAt" TIMESTAMPTZ(3),
    "approvedAt" TIMESTAMPTZ(3),
    "approvedById" TEXT,
    "closedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "purchase_orders_orgId_number_key" ON "purchase_orders"("orgId", "number");
-- The list is newest first; one index per filter in that order.
CREATE INDEX "purchase_orders_orgId_createdAt_id_idx" ON "purchase_orders"("orgId", "createdAt", "id");
CREATE INDEX "purchase_orders_orgId_status_createdAt_id_idx" ON "purchase_orders"("orgId", "status", "createdAt", "id");
CREATE INDEX "purchase_orders_orgId_vendorId_createdAt_id_idx" ON "purchase_orders"("orgId", "vendorId", "createdAt", "id");

CREATE TABLE "purchase_order_lines" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "purchaseOrderId" TEXT NOT NULL REFERENCES "purchase_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "position" INTEGER NOT NULL,
    "partId" TEXT NOT NULL REFERENCES "parts"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "quantity" NUMERIC(14,4) NOT NULL,
    "unitCost" NUMERIC(18,4) NOT NULL,
    "received" NUMERIC(14,4) NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "purchase_order_lines_orgId_purchaseOrderId_position_idx"
    ON "purchase_order_lines"("orgId", "purchaseOrderId", "position");
-- Open order lines of a part (archiving a part asks for them).
CREATE INDEX "purchase_order_lines_orgId_partId_idx" ON "purchase_order_lines"("orgId", "partId");

CREATE TABLE "purchase_order_receipts" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "purchaseOrderId" TEXT NOT NULL REFERENCES "purchase_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    -- [{lineId, partId, quantity, unitCost, totalCost, ledgerEntryId}] as received.
    "lines" JSONB NOT NULL,
    "receivedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "purchase_order_receipts_orgId_purchaseOrderId_receivedAt_idx"
    ON "purchase_order_receipts"("orgId", "purchaseOrderId", "receivedAt");
