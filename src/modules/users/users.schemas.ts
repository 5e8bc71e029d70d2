import { z } from 'zod';
import { boolQuery } from '../tools/tools.schemas.ts';
import { cursorQuery, dateTime, limitQuery, optionalText } from '../../core/schemas.ts';

/** One email rule for the API and the admin CLI: trimmed, lower-cased, something@domain.tld. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const email = z
  .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
  .max(320)
  .transform(normalizeEmail)
  .refine((s) => EMAIL_PATTERN.test(s), 'is not an email address')
  .describe('Unique within the organisation; stored trimmed and lower-cased');

export const CreateUserBody = z
  .object({ email, name: optionalText(200).describe('Display name; null or blank for none') })
  .describe('Adds a person; the email of a removed person adds them back (same id, their old keys stay revoked)');
export type CreateUserInput = z.output<typeof CreateUserBody>;

export const UpdateUserBody = z
  .object({ name: optionalText(200).describe('Display name; null or blank clears it') })
  .describe('Only the name can change; an email is the identity of a person (remove and add instead)');
export type UpdateUserInput = z.output<typeof UpdateUserBody>;

export const ListUsersQuery = z.object({
  limit: limitQuery,
  cursor: cursorQuery,
  q: z
    .string()
    .trim()
    .max(200)
    .optional()
    .describe(
      'Case-insensitive substring of the name or email. Each page examines at most 2,000 people, so a page can be short (even empty) while nextCursor is not null',
    ),
  includeRemoved: boolQuery.describe('Also list removed people (default false)'),
});
export type ListUsersInput = z.output<typeof ListUsersQuery>;

// ---- responses

export const UserRow = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    email: z.string(),
    createdAt: dateTime(),
    removedAt: dateTime().nullable().describe('Set when the person was removed; their keys can read but not write'),
  })
  .meta({ id: 'User' });

export const ListUsersResponse = z.object({
  ok: z.literal(true),
  users: z.array(UserRow),
  nextCursor: z.string().nullable(),
});
export const UserResponse = z.object({ ok: z.literal(true), user: UserRow });
export const UserWriteResponse = z.object({ ok: z.literal(true), userId: z.string(), user: UserRow });
export const CreateUserResponse = UserWriteResponse.extend({
  restored: z.boolean().describe('True when a removed person with this email was added back'),
});
export const RemoveUserResponse = z.object({
  ok: z.literal(true),
  userId: z.string(),
  removedAt: dateTime().describe('When the person was removed (the original time if they already were)'),
});

export interface UserRecord {
  id: string;
  name: string | null;
  email: string;
  createdAt: Date;
  removedAt: Date | null;
}

export function toUserRow(u: UserRecord): z.input<typeof UserRow> {
  return {
    id: u.id,
    name: u.name,
    email: u.email,
    createdAt: u.createdAt.toISOString(),
    removedAt: u.removedAt?.toISOString() ?? null,
  };
}
