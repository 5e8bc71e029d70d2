-- Deleting a yard unassigns its assets and tools in the database itself, so an asset or tool written
-- concurrently with the delete can never keep pointing at a yard that no longer exists.
UPDATE "assets" SET "yardId" = NULL WHERE "yardId" IS NOT NULL AND "yardId" NOT IN (SELECT "id" FROM "yards");
UPDATE "tools" SET "assignedYardId" = NULL WHERE "assignedYardId" IS NOT NULL AND "assignedYardId" NOT IN (SELECT "id" FROM "yards");

-- AddForeignKey
ALTER TABLE "assets" ADD CONSTRAINT "assets_yardId_fkey" FOREIGN KEY ("yardId") REFERENCES "yards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tools" ADD CONSTRAINT "tools_assignedYardId_fkey" FOREIGN KEY ("assignedYardId") REFERENCES "yards"("id") ON DELETE SET NULL ON UPDATE CASCADE;
