-- AlterTable
ALTER TABLE "tool_events" ADD COLUMN     "holderUserId" TEXT,
ADD COLUMN     "holderVehicleId" TEXT;
