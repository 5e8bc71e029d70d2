-- AlterTable
ALTER TABLE "meter_logs" ADD COLUMN     "reviewedAt" TIMESTAMPTZ(3),
ADD COLUMN     "reviewedById" TEXT;
