-- Webhook signing secrets encrypted at rest (AES-256-GCM under SECRETS_ENCRYPTION_KEYS, see the README).
-- Expand step: the ciphertext columns are added; the plaintext columns stay (nullable) for one release so
-- that the previous release keeps reading and writing them during a rolling upgrade. Start-up seals every
-- plaintext secret and sets the plaintext column to NULL; a later release drops it.
ALTER TABLE "webhook_subscriptions" ADD COLUMN "secretCiphertext" TEXT;
ALTER TABLE "webhook_subscriptions" ADD COLUMN "previousSecretCiphertext" TEXT;
ALTER TABLE "webhook_subscriptions" ALTER COLUMN "secret" DROP NOT NULL;
