import { randomBytes } from 'node:crypto';
import type { Database } from '../../../src/db/database.ts';
import { createOrgAdmin } from '../../../src/modules/orgs/orgs.service.ts';

export interface TestTenant {
  orgId: string;
  slug: string;
  userId: string;
  email: string;
  /** Plaintext key with every scope. */
  key: string;
  keyId: string;
  /** Issues another key for this tenant's user, e.g. with fewer scopes. */
  newKey(opts?: {
    scopes?: string;
    rateLimit?: number;
    expires?: string;
    label?: string;
  }): Promise<{ key: string; id: string }>;
}

/** An organisation with one user and an all-scopes key. */
export async function createTenant(db: Database, name = 'Acme Haulage'): Promise<TestTenant> {
  const admin = createOrgAdmin(db);
  const slug = `t-${randomBytes(5).toString('hex')}`;
  const org = await admin.createOrg(name, slug);
  const user = await admin.createUser(slug, `ops@${slug}.example.com`, 'Olive Ops');
  const newKey = async (opts: { scopes?: string; rateLimit?: number; expires?: string; label?: string } = {}) => {
    const k = await admin.createKey({
      orgSlug: slug,
      userEmail: user.email,
      label: opts.label ?? 'test',
      scopes: opts.scopes ?? 'all',
      expires: opts.expires,
      rateLimit: opts.rateLimit?.toString(),
    });
    return { key: k.key, id: k.id };
  };
  const first = await newKey();
  return { orgId: org.id, slug, userId: user.id, email: user.email, key: first.key, keyId: first.id, newKey };
}
