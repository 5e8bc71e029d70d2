-- Parts and inventory: the organisation's currency and cost method, a parts catalogue, stock per part and yard,
-- an append-only ledger of every movement, the cost layers the stock is valued by, and the part and labour lines
-- of work orders. Quantities are numeric(14,4) (litres of oil), unit costs numeric(18,4), amounts numeric(14,2).

CREATE TYPE "InventoryCostMethod" AS ENUM ('FIFO', 'AVERAGE');
CREATE TYPE "InventoryEntryType" AS ENUM ('adjustment', 'receipt', 'issue', 'return', 'transfer_out', 'transfer_in');

-- A constant default: a catalogue-only change on PostgreSQL 11+, no table rewrite.
ALTER TABLE "organizations" ADD COLUMN "currency" TEXT NOT NULL DEFAULT 'USD';
ALTER TABLE "organizations" ADD COLUMN "inventoryCostMethod" "InventoryCostMethod" NOT NULL DEFAULT 'FIFO';

CREATE TABLE "parts" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "number" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "manufacturer" TEXT,
    "manufacturerPartNumber" TEXT,
    "upc" TEXT,
    "category" TEXT,
    "unit" TEXT,
    "unitCost" NUMERIC(18,4),
    "trackInventory" BOOLEAN NOT NULL DEFAULT true,
    "reorderPoint" NUMERIC(14,4),
    "reorderQuantity" NUMERIC(14,4),
    "archivedAt" TIMESTAMPTZ(3),
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- Part numbers are unique per organisation whatever their case ("ABC-1" and "abc-1" are one part).
CREATE UNIQUE INDEX "parts_orgId_number_key" ON "parts"("orgId", (lower("number")));
CREATE INDEX "parts_orgId_createdAt_id_idx" ON "parts"("orgId", "createdAt", "id");

CREATE TABLE "part_stock" (
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "partId" TEXT NOT NULL REFERENCES "parts"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "yardId" TEXT NOT NULL REFERENCES "yards"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "onHand" NUMERIC(14,4) NOT NULL DEFAULT 0 CHECK ("onHand" >= 0),
    "value" NUMERIC(14,2) NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY ("orgId", "partId", "yardId")
);
CREATE INDEX "part_stock_orgId_yardId_partId_idx" ON "part_stock"("orgId", "yardId", "partId");

CREATE TABLE "inventory_ledger" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "partId" TEXT NOT NULL REFERENCES "parts"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    -- No foreign key: the history keeps the id of a yard deleted since (only a yard without stock can be).
    "yardId" TEXT NOT NULL,
    "type" "InventoryEntryType" NOT NULL,
    "quantity" NUMERIC(14,4) NOT NULL,
    "previousQuantity" NUMERIC(14,4) NOT NULL,
    "currentQuantity" NUMERIC(14,4) NOT NULL,
    "unitCost" NUMERIC(18,4) NOT NULL,
    "totalCost" NUMERIC(14,2) NOT NULL,
    "reason" TEXT,
    "note" TEXT,
    "sourceType" TEXT,
    "sourceId" TEXT,
    "createdById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "inventory_ledger_orgId_createdAt_id_idx" ON "inventory_ledger"("orgId", "createdAt", "id");
CREATE INDEX "inventory_ledger_orgId_partId_createdAt_id_idx" ON "inventory_ledger"("orgId", "partId", "createdAt", "id");
CREATE INDEX "inventory_ledger_orgId_yardId_createdAt_id_idx" ON "inventory_ledger"("orgId", "yardId", "createdAt", "id");

-- What the stock of a part in a yard is worth, oldest first: FIFO takes from the oldest open layer; AVERAGE keeps
-- one open layer per part and yard. "remainingValue" is exact to the cent so the issued and shelf values always
-- add up to what was received.
CREATE TABLE "inventory_cost_layers" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "partId" TEXT NOT NULL REFERENCES "parts"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "yardId" TEXT NOT NULL REFERENCES "yards"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "entryId" TEXT,
    "quantity" NUMERIC(14,4) NOT NULL,
    "unitCost" NUMERIC(18,4) NOT NULL,
    "remaining" NUMERIC(14,4) NOT NULL CHECK ("remaining" >= 0),
    "remainingValue" NUMERIC(14,2) NOT NULL,
    "receivedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- Only open layers are ever read back, oldest first.
CREATE INDEX "inventory_cost_layers_open_idx" ON "inventory_cost_layers"("orgId", "partId", "yardId", "receivedAt", "id") WHERE "remaining" > 0;

CREATE TABLE "work_order_part_lines" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "workOrderId" TEXT NOT NULL REFERENCES "work_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "partId" TEXT NOT NULL REFERENCES "parts"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    "yardId" TEXT REFERENCES "yards"("id") ON DELETE SET NULL ON UPDATE CASCADE,
    "quantity" NUMERIC(14,4) NOT NULL,
    "unitCost" NUMERIC(18,4) NOT NULL,
    "totalCost" NUMERIC(14,2) NOT NULL,
    "tracked" BOOLEAN NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdById" TEXT
);
CREATE INDEX "work_order_part_lines_orgId_workOrderId_idx" ON "work_order_part_lines"("orgId", "workOrderId");
CREATE INDEX "work_order_part_lines_orgId_createdAt_idx" ON "work_order_part_lines"("orgId", "createdAt");

CREATE TABLE "work_order_labor_lines" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "workOrderId" TEXT NOT NULL REFERENCES "work_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "hours" NUMERIC(10,2) NOT NULL,
    "rate" NUMERIC(14,4) NOT NULL,
    "totalCost" NUMERIC(14,2) NOT NULL,
    "technicianId" TEXT,
    "description" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdById" TEXT
);
CREATE INDEX "work_order_labor_lines_orgId_workOrderId_idx" ON "work_order_labor_lines"("orgId", "workOrderId");
CREATE INDEX "work_order_labor_lines_orgId_createdAt_idx" ON "work_order_labor_lines"("orgId", "createdAt");
