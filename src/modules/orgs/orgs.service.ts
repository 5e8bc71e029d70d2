import type { Database } from '../../db/database.ts';
import { generateApiKey, hashApiKey } from '../../http/api-keys.ts';
import { SCOPES, type Scope } from '../../http/context.ts';

/** Administrative operations behind the admin CLI (the only way to issue keys). */
export class AdminError extends Error {}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function slugify(name: string): string {
  return name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64) || 'org';
}

export function parseScopes(input: string | undefined): Scope[] {
  if (!input || input === 'all') return [...SCOPES];
  const scopes = input.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new AdminError(`unknown scope(s): ${unknown.join(', ')} (valid: all or ${SCOPES.join(',')})`);
  if (scopes.length === 0) throw new AdminError('--scopes needs at least one scope');
  return [...new Set(scopes)] as Scope[];
}

export function createOrgAdmin(db: Database) {
  const prisma = db.prisma;

  async function orgBySlug(slug: string) {
    const org = await prisma.organization.findUnique({ where: { slug } });
    if (!org) throw new AdminError(`no organisation with slug "${slug}"`);
    return org;
  }

  return {
    async createOrg(name: string, slug?: string) {
      if (!name.trim()) throw new AdminError('--name cannot be blank');
      const finalSlug = slug ?? slugify(name);
      if (!SLUG.test(finalSlug)) throw new AdminError(`slug "${finalSlug}" must be lowercase letters, digits and dashes`);
      if (await prisma.organization.findUnique({ where: { slug: finalSlug } })) {
        throw new AdminError(`an organisation with slug "${finalSlug}" already exists`);
      }
      const org = await prisma.organization.create({ data: { name: name.trim(), slug: finalSlug } });
      return { id: org.id, name: org.name, slug: org.slug, createdAt: org.createdAt.toISOString() };
    },

    async createUser(orgSlug: string, email: string, name?: string) {
      const org = await orgBySlug(orgSlug);
      const normalized = email.trim().toLowerCase();
      if (!EMAIL.test(normalized)) throw new AdminError(`"${email}" is not an email address`);
      const existing = await prisma.user.findUnique({ where: { orgId_email: { orgId: org.id, email: normalized } } });
      if (existing && !existing.removedAt) throw new AdminError(`user ${normalized} already exists in ${orgSlug}`);
      // Re-adding a removed user restores the person, not their old keys: those stay unable to write for
      // good (revoked), so a key issued before the removal never regains write access.
      const user = existing
        ? await prisma.$transaction(async (tx) => {
            await tx.apiKey.updateMany({ where: { createdById: existing.id, revokedAt: null }, data: { revokedAt: new Date() } });
            return tx.user.update({ where: { id: existing.id }, data: { removedAt: null, name: name ?? existing.name } });
          })
        : await prisma.user.create({ data: { orgId: org.id, email: normalized, name: name ?? null } });
      return { id: user.id, email: user.email, name: user.name };
    },

    /** Users are removed softly so history keeps its actors; their keys can no longer write. */
    async removeUser(orgSlug: string, email: string) {
      const org = await orgBySlug(orgSlug);
      const user = await prisma.user.findUnique({ where: { orgId_email: { orgId: org.id, email: email.trim().toLowerCase() } } });
      if (!user || user.removedAt) throw new AdminError(`no user ${email} in ${orgSlug}`);
      const removed = await prisma.user.update({ where: { id: user.id }, data: { removedAt: new Date() } });
      return { id: removed.id, removedAt: removed.removedAt!.toISOString() };
    },

    async createKey(input: { orgSlug: string; userEmail: string; label: string; scopes?: string; expires?: string; rateLimit?: string }) {
      const org = await orgBySlug(input.orgSlug);
      const user = await prisma.user.findUnique({ where: { orgId_email: { orgId: org.id, email: input.userEmail.trim().toLowerCase() } } });
      if (!user || user.removedAt) throw new AdminError(`no user ${input.userEmail} in ${input.orgSlug}`);
      if (!input.label.trim()) throw new AdminError('--label cannot be blank');
      const scopes = parseScopes(input.scopes);
      let expiresAt: Date | null = null;
      if (input.expires !== undefined) {
        expiresAt = new Date(input.expires);
        if (Number.isNaN(expiresAt.getTime())) throw new AdminError(`--expires "${input.expires}" is not an ISO 8601 date-time`);
        if (expiresAt <= new Date()) throw new AdminError('--expires must be in the future');
      }
      let rateLimitPerMinute: number | null = null;
      if (input.rateLimit !== undefined) {
        rateLimitPerMinute = Number(input.rateLimit);
        if (!Number.isInteger(rateLimitPerMinute) || rateLimitPerMinute < 1) throw new AdminError('--rate-limit must be a positive whole number');
      }
      const key = generateApiKey();
      const row = await prisma.apiKey.create({
        data: { orgId: org.id, createdById: user.id, label: input.label.trim(), keyHash: hashApiKey(key), scopes, expiresAt, rateLimitPerMinute },
      });
      return { id: row.id, key, label: row.label, scopes: row.scopes, expiresAt: row.expiresAt?.toISOString() ?? null, rateLimitPerMinute };
    },

    async revokeKey(id: string) {
      const key = await prisma.apiKey.findUnique({ where: { id } });
      if (!key) throw new AdminError(`no key with id ${id}`);
      if (key.revokedAt) return { id: key.id, revokedAt: key.revokedAt.toISOString() };
      const revoked = await prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
      return { id: revoked.id, revokedAt: revoked.revokedAt!.toISOString() };
    },

    async listKeys(orgSlug: string) {
      const org = await orgBySlug(orgSlug);
      const keys = await prisma.apiKey.findMany({ where: { orgId: org.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
      const users = new Map(
        (await prisma.user.findMany({ where: { orgId: org.id } })).map((u) => [u.id, u.email] as const),
      );
      return {
        keys: keys.map((k) => ({
          id: k.id, label: k.label, scopes: k.scopes, createdBy: k.createdById ? (users.get(k.createdById) ?? null) : null,
          createdAt: k.createdAt.toISOString(), lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
          expiresAt: k.expiresAt?.toISOString() ?? null, revokedAt: k.revokedAt?.toISOString() ?? null,
          rateLimitPerMinute: k.rateLimitPerMinute,
        })),
      };
    },
  };
}

export type OrgAdmin = ReturnType<typeof createOrgAdmin>;
