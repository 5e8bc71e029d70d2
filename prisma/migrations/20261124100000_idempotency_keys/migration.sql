-- Idempotency-Key records (every POST and PATCH under /api/v1 but POST /hours, which keeps its own keys).
-- One row per (organisation, API key, key): the primary key is what makes a key claimable once across every
-- instance. "keyHash" is the SHA-256 of the key (the key itself is not stored); "fingerprint" the SHA-256 of
-- the method, path and canonical body. A running claim has "lockedUntil" (its lease) and "owner"; a finished one
-- has the response, encrypted with a key derived from the Idempotency-Key (base64) (see src/http/idempotency-store.ts).
CREATE TABLE "idempotency_keys" (
    "orgId" TEXT NOT NULL,
    "apiKeyId" TEXT NOT NULL,
    "keyHash" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "owner" TEXT,
    "lockedUntil" TIMESTAMPTZ(3),
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("orgId","apiKeyId","keyHash")
);

-- The pruning job deletes by age across organisations.
CREATE INDEX "idempotency_keys_createdAt_idx" ON "idempotency_keys"("createdAt");

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_apiKeyId_fkey" FOREIGN KEY ("apiKeyId") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
