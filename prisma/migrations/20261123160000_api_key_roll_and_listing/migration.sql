-- A rolled key points at the key it replaced; the unique index lets a key be rolled once (concurrent
-- rolls of the same key cannot both succeed).
ALTER TABLE "api_keys" ADD COLUMN "rolledFromId" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_rolledFromId_key" ON "api_keys"("rolledFromId");

-- The key list walks an organisation's keys newest first (keyset on this index).
CREATE INDEX "api_keys_orgId_createdAt_id_idx" ON "api_keys"("orgId", "createdAt", "id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_rolledFromId_fkey" FOREIGN KEY ("rolledFromId") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;
