import { createHash, randomBytes } from 'node:crypto';

/** Plaintext keys: this prefix then 43 base64url characters (32 random bytes). */
export const KEY_PREFIX = 'flt_';
const KEY_PATTERN = /^flt_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(plaintext: string): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

export function isWellFormedKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}
