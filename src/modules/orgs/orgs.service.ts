import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/database.ts';
import { SCOPES, type Scope } from '../../core/context.ts';
import { ApiError, ValidationError } from '../../core/errors.ts';
import { createApiKeyService } from '../api-keys/api-keys.service.ts';
import { EMAIL_PATTERN, normalizeEmail } from '../users/users.schemas.ts';
import { createUserService, type AccessActor } from '../users/users.service.ts';

/** A CLI usage or input error: printed as one line on stderr with exit code 1. */
export class AdminError extends Error {}

/**
 * The columns the CLI reads, named so that it still works on a database one migration behind (an upgrade test
 * creates its tenant there) whatever columns later releases add to organizations.
 */
const ORG_COLUMNS = { id: true, name: true, slug: true, createdAt: true } as const;

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export function slugify(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64) || 'org'
  );
}

export function parseScopes(input: string | undefined): Scope[] {
  if (!input || input === 'all') return [...SCOPES];
  const scopes = input
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length)
    throw new AdminError(`unknown scope(s): ${unknown.join(', ')} (valid: all or ${SCOPES.join(',')})`);
  if (scopes.length === 0) throw new AdminError('--scopes needs at least one scope');
  return [...new Set(scopes)] as Scope[];
}

/** The CLI acts as no user and no key: its audit events carry null actors. */
const cliActor = (orgId: string): AccessActor => ({ orgId, actorId: null, keyId: null });

/** Runs a shared-service call, turning its API errors into the CLI's one-line messages. */
async function cli<T>(fn: () => Promise<T>, messages: { duplicate: string }): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ValidationError && err.fieldErrors.email) throw new AdminError(messages.duplicate);
    if (err instanceof ApiError) throw new AdminError(err.message);
    throw err;
  }
}

/**
 * Administrative operations behind the admin CLI. Users and keys go through the same services as
 * `/api/v1/users` and `/api/v1/api-keys` (rules and audit events cannot drift); only the CLI's own input
 * parsing and messages live here.
 */
export function createOrgAdmin(db: Database) {
  const prisma = db.prisma;
  const users = createUserService({ db });
  const apiKeys = createApiKeyService({ db });

  async function orgBySlug(slug: string) {
    const org = await prisma.organization.findUnique({ where: { slug }, select: ORG_COLUMNS });
    if (!org) throw new AdminError(`no organisation with slug "${slug}"`);
    return org;
  }

  return {
    async createOrg(name: string, slug?: string) {
      if (!name.trim()) throw new AdminError('--name cannot be blank');
      const finalSlug = slug ?? slugify(name);
      if (!SLUG.test(finalSlug))
        throw new AdminError(`slug "${finalSlug}" must be lowercase letters, digits and dashes`);
      if (await prisma.organization.findUnique({ where: { slug: finalSlug }, select: { id: true } })) {
        throw new AdminError(`an organisation with slug "${finalSlug}" already exists`);
      }
      // Raw SQL: Prisma's create would name every column with a default, newer ones included.
      const [org] = await prisma.$queryRaw<{ id: string; name: string; slug: string; createdAt: Date }[]>`
        INSERT INTO "organizations" ("id", "name", "slug") VALUES (${randomUUID()}, ${name.trim()}, ${finalSlug})
        RETURNING "id", "name", "slug", "createdAt"`;
      return { id: org.id, name: org.name, slug: org.slug, createdAt: org.createdAt.toISOString() };
    },

    async createUser(orgSlug: string, email: string, name?: string) {
      const org = await orgBySlug(orgSlug);
      const normalized = normalizeEmail(email);
      if (!EMAIL_PATTERN.test(normalized)) throw new AdminError(`"${email}" is not an email address`);
      const existing = await users.findByEmail(org.id, normalized);
      const created = await cli(
        () =>
          // The CLI's --name keeps a restored person's old name when omitted; null would clear it.
          users.create(cliActor(org.id), { email: normalized, name: name ?? (existing ? undefined : null) }),
        { duplicate: `user ${normalized} already exists in ${orgSlug}` },
      );
      return { id: created.user.id, email: created.user.email, name: created.user.name };
    },

    /** Users are removed softly so history keeps its actors; their keys can no longer write. */
    async removeUser(orgSlug: string, email: string) {
      const org = await orgBySlug(orgSlug);
      const user = await users.findByEmail(org.id, normalizeEmail(email));
      if (!user || user.removedAt) throw new AdminError(`no user ${email} in ${orgSlug}`);
      const removed = await users.remove(cliActor(org.id), user.id);
      return { id: removed.userId, removedAt: removed.removedAt };
    },

    async createKey(input: {
      orgSlug: string;
      userEmail: string;
      label: string;
      scopes?: string;
      expires?: string;
      rateLimit?: string;
    }) {
      const org = await orgBySlug(input.orgSlug);
      const user = await users.findByEmail(org.id, normalizeEmail(input.userEmail));
      if (!user || user.removedAt) throw new AdminError(`no user ${input.userEmail} in ${input.orgSlug}`);
      if (!input.label.trim()) throw new AdminError('--label cannot be blank');
      const scopes = parseScopes(input.scopes);
      let expiresAt: Date | null = null;
      if (input.expires !== undefined) {
        expiresAt = new Date(input.expires);
        if (Number.isNaN(expiresAt.getTime()))
          throw new AdminError(`--expires "${input.expires}" is not an ISO 8601 date-time`);
        if (expiresAt <= new Date()) throw new AdminError('--expires must be in the future');
      }
      let rateLimitPerMinute: number | null = null;
      if (input.rateLimit !== undefined) {
        rateLimitPerMinute = Number(input.rateLimit);
        if (!Number.isInteger(rateLimitPerMinute) || rateLimitPerMinute < 1)
          throw new AdminError('--rate-limit must be a positive whole number');
      }
      const { row, key } = await apiKeys.issue(cliActor(org.id), {
        creatorId: user.id,
        label: input.label.trim(),
        scopes,
        expiresAt,
        rateLimitPerMinute,
      });
      return {
        id: row.id,
        key,
        label: row.label,
        scopes: row.scopes,
        expiresAt: row.expiresAt?.toISOString() ?? null,
        rateLimitPerMinute,
      };
    },

    async revokeKey(id: string) {
      const key = await prisma.apiKey.findUnique({ where: { id }, select: { orgId: true } });
      if (!key) throw new AdminError(`no key with id ${id}`);
      const revoked = await apiKeys.revoke(cliActor(key.orgId), id);
      return { id: revoked.apiKeyId, revokedAt: revoked.revokedAt };
    },

    async listKeys(orgSlug: string) {
      const org = await orgBySlug(orgSlug);
      const keys = await prisma.apiKey.findMany({
        where: { orgId: org.id },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      const users = new Map(
        (await prisma.user.findMany({ where: { orgId: org.id } })).map((u) => [u.id, u.email] as const),
      );
      return {
        keys: keys.map((k) => ({
          id: k.id,
          label: k.label,
          scopes: k.scopes,
          createdBy: k.createdById ? (users.get(k.createdById) ?? null) : null,
          createdAt: k.createdAt.toISOString(),
          lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
          expiresAt: k.expiresAt?.toISOString() ?? null,
          revokedAt: k.revokedAt?.toISOString() ?? null,
          rateLimitPerMinute: k.rateLimitPerMinute,
        })),
      };
    },
  };
}

export type OrgAdmin = ReturnType<typeof createOrgAdmin>;
