import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../../security/secret-box.ts';

const PURPOSE = 'attachment-upload-url/v1';

export interface UploadClaim {
  attachmentId: string;
  orgId: string;
  expiresAt: Date;
}

/**
 * The token of a local upload URL: base64url(JSON claim).base64url(HMAC-SHA256), keyed by a key derived from the
 * secrets keys (its id inside the claim, so a rotated key still verifies tokens it signed while it is held).
 * Single use is the database's (attachments.uploadClaimedAt), not the token's.
 */
export function createUploadTokens(box: Pick<SecretBox, 'derivedKey'>) {
  const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();
  return {
    sign(claim: UploadClaim): string {
      const key = box.derivedKey(PURPOSE)!;
      const body = Buffer.from(
        JSON.stringify({ a: claim.attachmentId, o: claim.orgId, e: claim.expiresAt.getTime(), k: key.id }),
      ).toString('base64url');
      return `${body}.${mac(key.key, body).toString('base64url')}`;
    },

    /** The claim of a well-formed, authentic, unexpired token; null otherwise (the caller says why not, once). */
    verify(token: string, now: Date): UploadClaim | 'expired' | null {
      const [body, signature, extra] = token.split('.');
      if (!body || !signature || extra !== undefined || token.length > 1024) return null;
      let claim: { a?: unknown; o?: unknown; e?: unknown; k?: unknown };
      try {
        claim = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return null;
      }
      if (typeof claim.a !== 'string' || typeof claim.o !== 'string' || typeof claim.e !== 'number') return null;
      if (typeof claim.k !== 'string') return null;
      const key = box.derivedKey(PURPOSE, claim.k);
      if (!key) return null;
      const expected = mac(key.key, body);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      if (claim.e <= now.getTime()) return 'expired';
      return { attachmentId: claim.a, orgId: claim.o, expiresAt: new Date(claim.e) };
    },
  };
}

export type UploadTokens = ReturnType<typeof createUploadTokens>;
