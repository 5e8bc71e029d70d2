import type { ServiceDeps } from '../../service-deps.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import { generateApiKey, hashApiKey } from '../../core/api-keys.ts';
import { SCOPES, type AuthenticatedKey } from '../../core/context.ts';
import { ApiError, conflict, notFound, ValidationError, type CodeOf } from '../../core/errors.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import { actorFields, type AccessActor } from '../users/users.service.ts';
import { findApiKeyRow, listApiKeyRows, lockApiKey } from './api-keys.repository.ts';
import {
  toApiKeySummary,
  type ApiKeyRecord,
  type CreateApiKeyInput,
  type RollApiKeyInput,
} from './api-keys.schemas.ts';

export interface KeySpec {
  creatorId: string | null;
  label: string;
  scopes: string[];
  expiresAt: Date | null;
  rateLimitPerMinute: number | null;
  rolledFromId?: string | null;
}

const known = new Set<string>(SCOPES);
const forbidden = (code: CodeOf<403>, message: string) => new ApiError(403, code, message);

/**
 * A key may hand out only what it holds itself: scopes, rate limit and lifetime. `limit` and `expiresAt`
 * are the new key's; the caller's null rate limit means the server default.
 */
function assertWithinCaller(
  caller: AuthenticatedKey,
  defaultLimit: number,
  wanted: { scopes: string[]; rateLimitPerMinute: number | null; expiresAt: Date | null },
) {
  const extra = wanted.scopes.filter((s) => !(caller.scopes as string[]).includes(s));
  if (extra.length)
    throw forbidden('scope_escalation', `A key cannot grant scopes it does not hold: ${extra.join(', ')}`);
  const callerLimit = caller.rateLimitPerMinute ?? defaultLimit;
  if ((wanted.rateLimitPerMinute ?? defaultLimit) > callerLimit) {
    throw forbidden(
      'rate_limit_escalation',
      `A key cannot grant a rate limit above its own (${callerLimit} per minute)`,
    );
  }
  if (caller.expiresAt && (!wanted.expiresAt || wanted.expiresAt > caller.expiresAt)) {
    throw forbidden(
      'expiry_escalation',
      `A key cannot grant a lifetime beyond its own expiry (${caller.expiresAt.toISOString()})`,
    );
  }
}

/**
 * API keys of an organisation. The one implementation behind `/api/v1/api-keys` and the admin CLI's
 * `key create` / `key revoke`, so the two cannot drift. `auth` (absent in the CLI) lets a revocation take
 * effect in this process at once instead of after the auth-cache TTL.
 */
export function createApiKeyService({
  db,
  config,
  auth,
}: Pick<ServiceDeps, 'db'> & {
  config?: Pick<ServiceDeps['config'], 'rateLimitPerMinute'>;
  auth?: Pick<ServiceDeps['auth'], 'forget' | 'lastUsedAtOf'>;
}) {
  const defaultLimit = config?.rateLimitPerMinute ?? 60;
  const summary = (row: ApiKeyRecord) =>
    toApiKeySummary(row, auth ? auth.lastUsedAtOf(row.id, row.lastUsedAt) : row.lastUsedAt);

  async function summaryOf(orgId: string, id: string) {
    const row = await findApiKeyRow(db.sql, orgId, id);
    if (!row) throw notFound('API key');
    return summary(row);
  }

  /** Stores a new key and records apiKey.created; the plaintext exists only in the return value. */
  async function issue(tx: Tx, actor: AccessActor, spec: KeySpec) {
    const key = generateApiKey();
    const row = await tx.apiKey.create({
      data: {
        orgId: actor.orgId,
        createdById: spec.creatorId,
        label: spec.label,
        keyHash: hashApiKey(key),
        scopes: spec.scopes,
        expiresAt: spec.expiresAt,
        rateLimitPerMinute: spec.rateLimitPerMinute,
        rolledFromId: spec.rolledFromId ?? null,
      },
    });
    await emit(tx, actor.orgId, 'apiKey.created', {
      apiKeyId: row.id,
      label: row.label,
      scopes: row.scopes,
      expiresAt: row.expiresAt?.toISOString() ?? null,
      rateLimitPerMinute: row.rateLimitPerMinute,
      createdById: row.createdById,
      rolledFromId: row.rolledFromId,
      ...actorFields(actor),
      createdAt: row.createdAt.toISOString(),
    });
    return { row, key };
  }

  async function revokeIn(tx: Tx, actor: AccessActor, id: string, reason: 'revoked' | 'rolled', now: Date) {
    const revoked = await tx.apiKey.updateManyAndReturn({
      where: { id, orgId: actor.orgId, revokedAt: null },
      data: { revokedAt: now },
    });
    if (revoked.length === 0) return null;
    await emit(tx, actor.orgId, 'apiKey.revoked', {
      apiKeyId: id,
      label: revoked[0].label,
      reason,
      ...actorFields(actor),
      revokedAt: now.toISOString(),
    });
    return now;
  }

  return {
    issue: (actor: AccessActor, spec: KeySpec) => transaction(db, (tx) => issue(tx, actor, spec)),

    async list(actor: AccessActor, query: { limit: number; cursor?: string }) {
      const rows = await listApiKeyRows(
        db.sql,
        actor.orgId,
        timeIdCursor(decodeCursor(query.cursor, 2)),
        query.limit + 1,
      );
      const { page, nextCursor } = paginate(rows, query.limit, (k) => [new Date(k.createdAt).toISOString(), k.id]);
      return { ok: true as const, apiKeys: page.map(summary), nextCursor };
    },

    async get(actor: AccessActor, id: string) {
      return { ok: true as const, apiKey: await summaryOf(actor.orgId, id) };
    },

    /** A key issued over the API: within the caller's scopes, limit and lifetime; its creator is the caller's. */
    async create(actor: AccessActor, caller: AuthenticatedKey, input: CreateApiKeyInput) {
      if (input.expiresAt && input.expiresAt <= new Date())
        throw new ValidationError({ expiresAt: 'must be in the future' });
      const spec: KeySpec = {
        creatorId: actor.actorId,
        label: input.label,
        scopes: input.scopes,
        expiresAt: input.expiresAt ?? caller.expiresAt,
        rateLimitPerMinute:
          input.rateLimitPerMinute !== undefined && input.rateLimitPerMinute !== null
            ? input.rateLimitPerMinute
            : caller.rateLimitPerMinute,
      };
      assertWithinCaller(caller, defaultLimit, spec);
      const { row, key } = await transaction(db, (tx) => issue(tx, actor, spec));
      return { ok: true as const, apiKeyId: row.id, key, apiKey: await summaryOf(actor.orgId, row.id) };
    },

    /**
     * Revokes a key (a key may revoke itself). Revoking a revoked key changes nothing and answers the original
     * time. Takes effect at once in this process and within the auth-cache TTL in others.
     */
    async revoke(actor: AccessActor, id: string) {
      const revokedAt = await transaction(db, async (tx) => {
        const key = await tx.apiKey.findFirst({ where: { id, orgId: actor.orgId }, select: { revokedAt: true } });
        if (!key) throw notFound('API key');
        if (key.revokedAt) return key.revokedAt;
        return (
          (await revokeIn(tx, actor, id, 'revoked', new Date())) ??
          (await tx.apiKey.findUniqueOrThrow({ where: { id } })).revokedAt!
        );
      });
      auth?.forget({ keyIds: [id] });
      return { ok: true as const, apiKeyId: id, revokedAt: revokedAt.toISOString() };
    },

    /**
     * Issues a successor with the same label, scopes, rate limit and expiry; the old key is revoked now or
     * keeps working for expireOldInSeconds. A key is rolled once; revoked and expired keys cannot be rolled.
     */
    async roll(actor: AccessActor, caller: AuthenticatedKey, id: string, input: RollApiKeyInput) {
      const overlapSec = input?.expireOldInSeconds ?? 0;
      const now = new Date();
      let result;
      try {
        result = await transaction(db, async (tx) => {
          const old = await lockApiKey(tx, actor.orgId, id);
          if (!old) throw notFound('API key');
          if (old.revokedAt) throw conflict('key_revoked', 'A revoked key cannot be rolled');
          if (old.expiresAt && old.expiresAt <= now) throw conflict('key_expired', 'An expired key cannot be rolled');
          if (await tx.apiKey.findUnique({ where: { rolledFromId: id }, select: { id: true } })) {
            throw conflict('key_already_rolled', 'This key has already been rolled; roll its successor instead');
          }
          const spec: KeySpec = {
            creatorId: actor.actorId,
            label: old.label,
            scopes: old.scopes.filter((s) => known.has(s)),
            expiresAt: old.expiresAt,
            rateLimitPerMinute: old.rateLimitPerMinute,
            rolledFromId: old.id,
          };
          assertWithinCaller(caller, defaultLimit, spec);
          const issued = await issue(tx, actor, spec);
          let previous: { expiresAt: Date | null; revokedAt: Date | null };
          if (overlapSec === 0) {
            previous = { expiresAt: old.expiresAt, revokedAt: await revokeIn(tx, actor, id, 'rolled', now) };
          } else {
            const until = new Date(now.getTime() + overlapSec * 1000);
            const expiresAt = old.expiresAt && old.expiresAt < until ? old.expiresAt : until;
            await tx.apiKey.update({ where: { id }, data: { expiresAt } });
            previous = { expiresAt, revokedAt: null };
          }
          return { ...issued, previous };
        });
      } catch (err) {
        if (isUniqueViolation(err))
          throw conflict('key_already_rolled', 'This key has already been rolled; roll its successor instead');
        throw err;
      }
      auth?.forget({ keyIds: [id] });
      return {
        ok: true as const,
        apiKeyId: result.row.id,
        key: result.key,
        apiKey: await summaryOf(actor.orgId, result.row.id),
        previousKey: {
          id,
          expiresAt: result.previous.expiresAt?.toISOString() ?? null,
          revokedAt: result.previous.revokedAt?.toISOString() ?? null,
        },
      };
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
