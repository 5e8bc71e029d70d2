import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM, the one authenticated cipher of the service (stored idempotent responses, webhook signing
 * secrets). Layout: iv (12 bytes) | tag (16) | ciphertext. `aad` (associated data) is authenticated but not
 * stored: a ciphertext only opens where the same context is given again (GCM without AAD equals empty AAD, so
 * records sealed before a caller started passing one still open with none).
 */
export function seal(key: Buffer, plaintext: Buffer | string, aad?: Buffer | string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad));
  const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]);
}

/** Throws when the bytes were altered, the key is another one, or the associated data differs. */
export function open(key: Buffer, sealed: Buffer, aad?: Buffer | string): Buffer {
  if (sealed.length < 28) throw new Error('sealed data too short');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
}
