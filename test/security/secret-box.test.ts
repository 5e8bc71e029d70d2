import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyring, type Keyring } from '../../src/core/secret-keys.ts';
import { createSecretBox, keyIdOf, SecretUnavailableError } from '../../src/security/secret-box.ts';

/** A keyring that counts decryptions (each one looks its key up). */
function countingKeyring() {
  const inner = createKeyring([{ id: 'k1', key: randomBytes(32) }]);
  const ring: Keyring & { lookups: number } = {
    ...inner,
    lookups: 0,
    get(id) {
      ring.lookups++;
      return inner.get(id);
    },
  };
  return ring;
}
const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

describe('secret box', () => {
  it('seals to v1:<key id>:<base64>, and opens only for the same subscription and slot', () => {
    const box = createSecretBox(createKeyring([{ id: 'k1', key: randomBytes(32) }]));
    const id = randomUUID();
    const s = secret();
    const sealed = box.sealSecret(id, 'current', s);
    expect(keyIdOf(sealed)).toBe('k1');
    expect(sealed).not.toContain(s.slice(6));
    expect(box.openSecret(id, 'current', sealed)).toBe(s);
    expect(() => box.openSecret(randomUUID(), 'current', sealed)).toThrow(SecretUnavailableError);
    expect(() => box.openSecret(id, 'previous', sealed)).toThrow(/copied from another subscription or slot/);
    expect(() => box.openSecret(id, 'current', 'whsec_plain')).toThrow(/not a v1 ciphertext/);
  });

  it('caches an opened secret for a bounded time', () => {
    let now = 1_000;
    const ring = countingKeyring();
    const box = createSecretBox(ring, { cacheTtlMs: 1_000, now: () => now });
    const id = randomUUID();
    const sealed = box.sealSecret(id, 'current', secret());
    box.openSecret(id, 'current', sealed);
    box.openSecret(id, 'current', sealed);
    expect(ring.lookups).toBe(1);
    now = 2_001;
    box.openSecret(id, 'current', sealed);
    expect(ring.lookups).toBe(2);
    // A new ciphertext for the row (rotation, re-encryption) is opened afresh.
    box.openSecret(id, 'current', box.sealSecret(id, 'current', secret()));
    expect(ring.lookups).toBe(3);
  });

  it('keeps at most cacheMax secrets, dropping the least recently used', () => {
    const ring = countingKeyring();
    const box = createSecretBox(ring, { cacheMax: 2 });
    const rows = [randomUUID(), randomUUID(), randomUUID()].map((id) => ({
      id,
      sealed: box.sealSecret(id, 'current', secret()),
    }));
    for (const r of rows) box.openSecret(r.id, 'current', r.sealed);
    expect(ring.lookups).toBe(3);
    box.openSecret(rows[2].id, 'current', rows[2].sealed); // still cached
    expect(ring.lookups).toBe(3);
    box.openSecret(rows[0].id, 'current', rows[0].sealed); // evicted by the third
    expect(ring.lookups).toBe(4);
    // The second was used before the third: it went out when the first came back, and the third stays.
    box.openSecret(rows[2].id, 'current', rows[2].sealed);
    expect(ring.lookups).toBe(4);
    box.openSecret(rows[1].id, 'current', rows[1].sealed);
    expect(ring.lookups).toBe(5);
  });
});
