import { hkdfSync } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { open, seal } from '../core/aead.ts';
import type { Keyring } from '../core/secret-keys.ts';

/** Which secret of a subscription a ciphertext holds; bound into it, so it cannot be moved to the other slot. */
export type SecretSlot = 'current' | 'previous';

/**
 * A subscription's secret columns as stored. `secret` and `previousSecret` are the plaintext columns of
 * releases before 0.2 (NULL once sealed; docs/adr/0008-secrets-envelope.md); the ciphertexts are
 * `v1:<key id>:<base64 of iv | tag | AES-256-GCM ciphertext>`.
 */
export interface StoredSecrets {
  secret: string | null;
  secretCiphertext: string | null;
  previousSecret: string | null;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | string | null;
}

/** A secret that cannot be used: its key is not configured, or the ciphertext does not authenticate. */
export class SecretUnavailableError extends Error {
  constructor(
    readonly subscriptionId: string,
    readonly reason: 'missing_key' | 'tampered' | 'missing',
    message: string,
  ) {
    super(message);
  }
}

const VERSION = 'v1';
/** What the ciphertext is bound to: format, key id, subscription and slot (GCM associated data, not stored). */
const aad = (keyId: string, subscriptionId: string, slot: SecretSlot) =>
  `fleet-webhook-secret\0${VERSION}\0${keyId}\0${subscriptionId}\0${slot}`;

/** The key id a ciphertext was made with (null: not a ciphertext of this format). */
export function keyIdOf(stored: string): string | null {
  const parts = stored.split(':');
  return parts.length === 3 && parts[0] === VERSION ? parts[1] : null;
}

export interface SecretBoxOptions {
  /** How long a decrypted secret is kept in memory (default 5 minutes). */
  cacheTtlMs?: number;
  /** How many decrypted secrets are kept at most (default 10,000; the least recently used go first). */
  cacheMax?: number;
  now?: () => number;
}

/**
 * Seals and opens webhook signing secrets under the keyring. Opening costs a GCM decryption per
 * secret, so the dispatcher's hot path goes through a small cache: bounded in size and time, one entry per
 * subscription and slot, used only for the very ciphertext it was opened from (a ciphertext copied onto another
 * row never hits another row's entry; a re-encrypted or rotated one is opened afresh).
 */
export function createSecretBox(keyring: Keyring, options: SecretBoxOptions = {}) {
  const ttlMs = options.cacheTtlMs ?? 5 * 60_000;
  const max = options.cacheMax ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new LRUCache<string, { stored: string; secret: string }>({
    max,
    ttl: ttlMs,
    // Each get reads the clock (no 1 ms reuse of a reading), so an injected clock is obeyed at once.
    ttlResolution: 0,
    perf: { now },
  });

  function sealSecret(subscriptionId: string, slot: SecretSlot, secret: string): string {
    const { id, key } = keyring.primary;
    return `${VERSION}:${id}:${seal(key, secret, aad(id, subscriptionId, slot)).toString('base64')}`;
  }

  function decrypt(subscriptionId: string, slot: SecretSlot, stored: string): string {
    const keyId = keyIdOf(stored);
    if (keyId === null)
      throw new SecretUnavailableError(subscriptionId, 'tampered', `the stored ${slot} secret is not a v1 ciphertext`);
    const key = keyring.get(keyId);
    if (!key)
      throw new SecretUnavailableError(
        subscriptionId,
        'missing_key',
        `the ${slot} secret is encrypted with key "${keyId}", which is not in SECRETS_ENCRYPTION_KEYS`,
      );
    try {
      return open(
        key,
        Buffer.from(stored.slice(stored.lastIndexOf(':') + 1), 'base64'),
        aad(keyId, subscriptionId, slot),
      ).toString('utf8');
    } catch {
      throw new SecretUnavailableError(
        subscriptionId,
        'tampered',
        `the ${slot} secret does not decrypt with key "${keyId}": the ciphertext was altered or copied from another subscription or slot`,
      );
    }
  }

  function openSecret(subscriptionId: string, slot: SecretSlot, stored: string): string {
    // Keyed by row and slot; a hit must be for this very ciphertext (a changed or copied one is opened afresh).
    const cacheKey = `${slot}:${subscriptionId}`;
    const hit = cache.get(cacheKey);
    if (hit?.stored === stored) return hit.secret;
    const secret = decrypt(subscriptionId, slot, stored);
    cache.set(cacheKey, { stored, secret });
    return secret;
  }

  /**
   * The plaintext secrets of a row, whatever wrote it: this release (ciphertexts only) or, during a rolling
   * upgrade, the previous one (plaintext `secret`; a rotation by it copies the then current `secret`, NULL once
   * sealed, into `previousSecret`, so the replaced secret is then the current ciphertext). `previous` is the
   * replaced secret whether or not its overlap is over.
   */
  function plaintexts(subscriptionId: string, s: StoredSecrets): { current: string; previous: string | null } {
    const current =
      s.secret ?? (s.secretCiphertext === null ? null : openSecret(subscriptionId, 'current', s.secretCiphertext));
    if (current === null) throw new SecretUnavailableError(subscriptionId, 'missing', 'the subscription has no secret');
    let previous: string | null = s.previousSecret;
    if (previous === null && s.previousSecretExpiresAt !== null) {
      if (s.secret !== null && s.secretCiphertext !== null)
        previous = openSecret(subscriptionId, 'current', s.secretCiphertext);
      else if (s.previousSecretCiphertext !== null)
        previous = openSecret(subscriptionId, 'previous', s.previousSecretCiphertext);
    }
    return { current, previous };
  }

  return {
    sealSecret,
    openSecret,
    plaintexts,

    /** The secrets that sign now, newest first: the current one, plus the replaced one during its overlap. */
    liveSecrets(subscriptionId: string, s: StoredSecrets, at: Date): string[] {
      const expires = s.previousSecretExpiresAt === null ? null : new Date(s.previousSecretExpiresAt);
      const overlap = expires !== null && expires.getTime() > at.getTime();
      const { current, previous } = plaintexts(subscriptionId, overlap ? s : { ...s, previousSecretExpiresAt: null });
      return overlap && previous !== null ? [current, previous] : [current];
    },

    /** The columns that store these secrets under the first key; plaintext columns NULL. */
    sealed(subscriptionId: string, secrets: { current: string; previous: string | null }) {
      return {
        secret: null,
        previousSecret: null,
        secretCiphertext: sealSecret(subscriptionId, 'current', secrets.current),
        previousSecretCiphertext:
          secrets.previous === null ? null : sealSecret(subscriptionId, 'previous', secrets.previous),
      };
    },

    /** Whether the row is stored as this release stores it under the first key (nothing to re-encrypt). */
    isCurrent(s: Pick<StoredSecrets, 'secret' | 'previousSecret' | 'secretCiphertext' | 'previousSecretCiphertext'>) {
      const primary = keyring.primary.id;
      return (
        s.secret === null &&
        s.previousSecret === null &&
        s.secretCiphertext !== null &&
        keyIdOf(s.secretCiphertext) === primary &&
        (s.previousSecretCiphertext === null || keyIdOf(s.previousSecretCiphertext) === primary)
      );
    },
    primaryKeyId: keyring.primary.id,

    /**
     * A key for another purpose derived from a secrets key (HKDF-SHA256, the purpose as info), so signing
     * material rotates with SECRETS_ENCRYPTION_KEYS without being the encryption key itself. Without `keyId`, the
     * first key's; undefined for an id the keyring no longer holds.
     */
    derivedKey(purpose: string, keyId: string = keyring.primary.id): { id: string; key: Buffer } | undefined {
      const base = keyring.get(keyId);
      if (!base) return undefined;
      return { id: keyId, key: Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), purpose, 32)) };
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
