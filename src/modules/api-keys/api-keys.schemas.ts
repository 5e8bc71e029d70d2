import { z } from 'zod';
import { SCOPES } from '../../core/context.ts';
import { cursorQuery, dateTime, dateTimeInput, limitQuery, requiredText } from '../../core/schemas.ts';

export const MAX_ROLL_OVERLAP_SEC = 7 * 24 * 3600;

const scope = z.enum(SCOPES, { error: `must be one of ${SCOPES.join(', ')}` });

export const CreateApiKeyBody = z
  .object({
    label: requiredText(200),
    scopes: z
      .array(scope)
      .min(1, 'needs at least one scope')
      .max(SCOPES.length * 2)
      .transform((s) => [...new Set(s)])
      .describe("A subset of the calling key's scopes (403 scope_escalation otherwise)"),
    expiresAt: dateTimeInput()
      .nullable()
      .optional()
      .describe("In the future; default (and at most) the calling key's expiry, none if it has none"),
    rateLimitPerMinute: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .nullable()
      .optional()
      .describe("At most the calling key's limit (403 rate_limit_escalation otherwise); default the calling key's"),
  })
  .describe('A new key for the organisation, issued by the user who issued the calling key');
export type CreateApiKeyInput = z.output<typeof CreateApiKeyBody>;

export const RollApiKeyBody = z
  .object({
    expireOldInSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROLL_OVERLAP_SEC, 'must be at most 604800 (7 days)')
      .optional()
      .describe('How long the old key keeps working: 0 (default) revokes it now, at most 7 days'),
  })
  // Optional body: nullish renders as "may be null" in OpenAPI, which marks the request body optional there.
  .nullish();
export type RollApiKeyInput = z.output<typeof RollApiKeyBody>;

export const ListApiKeysQuery = z.object({ limit: limitQuery, cursor: cursorQuery });

// ---- responses

export const ApiKeySummary = z
  .object({
    id: z.string(),
    label: z.string(),
    scopes: z.array(z.string()),
    createdAt: dateTime(),
    lastUsedAt: dateTime().nullable(),
    expiresAt: dateTime().nullable(),
    createdBy: z.object({ id: z.string(), name: z.string().nullable(), email: z.string() }).nullable(),
    revokedAt: dateTime().nullable(),
    rateLimitPerMinute: z.number().int().nullable().describe('null: the server default'),
    rolledFromId: z.string().nullable().describe('The key this one replaced by a roll'),
  })
  .describe('The summary of GET /me plus revokedAt, rateLimitPerMinute and rolledFromId; never the key or its hash')
  .meta({ id: 'ApiKeySummary' });

export const ListApiKeysResponse = z.object({
  ok: z.literal(true),
  apiKeys: z.array(ApiKeySummary),
  nextCursor: z.string().nullable(),
});
export const ApiKeyResponse = z.object({ ok: z.literal(true), apiKey: ApiKeySummary });
export const CreateApiKeyResponse = z.object({
  ok: z.literal(true),
  apiKeyId: z.string(),
  key: z.string().describe('The plaintext key, shown this once: only its SHA-256 is stored'),
  apiKey: ApiKeySummary,
});
export const RollApiKeyResponse = CreateApiKeyResponse.extend({
  previousKey: z
    .object({ id: z.string(), expiresAt: dateTime().nullable(), revokedAt: dateTime().nullable() })
    .describe('The rolled key: revoked now, or expiring after expireOldInSeconds'),
});
export const RevokeApiKeyResponse = z.object({
  ok: z.literal(true),
  apiKeyId: z.string(),
  revokedAt: dateTime().describe('When the key was revoked (the original time if it already was)'),
});

export interface ApiKeyRecord {
  id: string;
  label: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  rateLimitPerMinute: number | null;
  rolledFromId: string | null;
  creatorId: string | null;
  creatorName: string | null;
  creatorEmail: string | null;
}

export function toApiKeySummary(k: ApiKeyRecord, lastUsedAt: Date | null): z.input<typeof ApiKeySummary> {
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: k.id,
    label: k.label,
    scopes: k.scopes,
    createdAt: new Date(k.createdAt).toISOString(),
    lastUsedAt: iso(lastUsedAt),
    expiresAt: iso(k.expiresAt),
    revokedAt: iso(k.revokedAt),
    rateLimitPerMinute: k.rateLimitPerMinute,
    rolledFromId: k.rolledFromId,
    createdBy: k.creatorId ? { id: k.creatorId, name: k.creatorName, email: k.creatorEmail ?? '' } : null,
  };
}
