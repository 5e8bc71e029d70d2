import { z } from 'zod';

/**
 * The audit trail of organisation self-service: people and API keys. Payloads never carry a key, its hash
 * or a prefix of either. `actorId` is the user who issued the calling key and `actorKeyId` the calling key;
 * both are null for changes made with the admin CLI.
 */
const id = z.string();
const nullableId = z.string().nullable();
const at = z.iso.datetime({ offset: true });
const actor = { actorId: nullableId, actorKeyId: nullableId };

export const accessEvents = {
  'apiKey.created': {
    summary: 'An API key is issued (API, admin CLI, or a roll). The plaintext key is never part of the event.',
    data: z.object({
      apiKeyId: id,
      label: z.string(),
      scopes: z.array(z.string()),
      expiresAt: at.nullable(),
      rateLimitPerMinute: z.number().int().nullable(),
      createdById: nullableId,
      rolledFromId: nullableId.describe('The key this one replaces, when issued by a roll'),
      ...actor,
      createdAt: at,
    }),
  },
  'apiKey.revoked': {
    summary: 'An API key is revoked (DELETE, a roll with expireOldInSeconds 0, admin CLI, or its user re-added).',
    data: z.object({
      apiKeyId: id,
      label: z.string(),
      reason: z.enum(['revoked', 'rolled', 'user_readded']).describe('What revoked it'),
      ...actor,
      revokedAt: at,
    }),
  },
  'user.created': {
    summary: 'A person is added to the organisation, or a removed person is added back (restored true).',
    data: z.object({
      userId: id,
      email: z.string(),
      name: z.string().nullable(),
      restored: z.boolean(),
      ...actor,
      at,
    }),
  },
  'user.removed': {
    summary: 'A person is removed; the keys they issued keep reading but can no longer write.',
    data: z.object({ userId: id, email: z.string(), name: z.string().nullable(), ...actor, removedAt: at }),
  },
} as const;

const AT = '2026-11-22T14:05:00.000Z';
const ACTOR = { actorId: 'usr_7f3c2a', actorKeyId: 'key_01' };

/** Example payloads for the AsyncAPI document (spread into the webhook event examples). */
export const ACCESS_EVENT_EXAMPLES: { [T in keyof typeof accessEvents]: z.input<(typeof accessEvents)[T]['data']> } = {
  'apiKey.created': {
    apiKeyId: 'key_02',
    label: 'ERP sync',
    scopes: ['assets:read', 'workorders:write'],
    expiresAt: null,
    rateLimitPerMinute: 60,
    createdById: 'usr_7f3c2a',
    rolledFromId: null,
    ...ACTOR,
    createdAt: AT,
  },
  'apiKey.revoked': { apiKeyId: 'key_02', label: 'ERP sync', reason: 'revoked', ...ACTOR, revokedAt: AT },
  'user.created': {
    userId: 'usr_8d41b0',
    email: 'mechanic@example.com',
    name: 'Max Mechanic',
    restored: false,
    ...ACTOR,
    at: AT,
  },
  'user.removed': {
    userId: 'usr_8d41b0',
    email: 'mechanic@example.com',
    name: 'Max Mechanic',
    ...ACTOR,
    removedAt: AT,
  },
};
