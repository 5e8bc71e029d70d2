import type { ServiceDeps } from '../../service-deps.ts';
import { transaction } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import { isUniqueViolation } from '../shared/unique-violation.ts';
import { scanUsers, USER_SCAN_CAP } from './users.repository.ts';
import { toUserRow, type CreateUserInput, type ListUsersInput, type UpdateUserInput } from './users.schemas.ts';

/**
 * Who makes an access change: the calling key and the user who issued it, or nulls for the admin CLI.
 * A request context fits this shape.
 */
export interface AccessActor {
  orgId: string;
  actorId: string | null;
  keyId: string | null;
}
export const actorFields = (a: AccessActor) => ({ actorId: a.actorId, actorKeyId: a.keyId });

export const duplicateEmail = (email: string) =>
  new ValidationError(
    { email: 'a user with this email already exists' },
    `A user with the email ${email} already exists in this organisation`,
  );

const badCursor = () => new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });

/**
 * People of an organisation. The one implementation behind both `/api/v1/users` and the admin CLI's
 * `user create` / `user remove`, so the two cannot drift. `auth` is absent in the CLI (no key cache there).
 */
export function createUserService({
  db,
  auth,
}: Pick<ServiceDeps, 'db'> & { auth?: Pick<ServiceDeps['auth'], 'forget'> }) {
  async function findOwned(actor: AccessActor, id: string) {
    const user = await db.prisma.user.findFirst({ where: { id, orgId: actor.orgId } });
    if (!user) throw notFound('User');
    return user;
  }

  return {
    async list(actor: AccessActor, query: ListUsersInput) {
      const cursor = decodeCursor(query.cursor, 1);
      if (cursor && typeof cursor[0] !== 'string') throw badCursor();
      const scan = await scanUsers(db.sql, actor.orgId, {
        afterEmail: (cursor?.[0] as string | undefined) ?? null,
        q: query.q || null,
        includeRemoved: query.includeRemoved,
        take: query.limit + 1,
      });
      const page = scan.hits.slice(0, query.limit);
      let nextCursor: string | null = null;
      if (scan.hits.length > query.limit) nextCursor = encodeCursor([page[page.length - 1].email]);
      // The walk stopped at its cap before finding a full page: continue from the last person examined.
      else if (scan.lastScannedEmail !== null && scan.scanned >= USER_SCAN_CAP) {
        nextCursor = encodeCursor([scan.lastScannedEmail]);
      }
      return { ok: true as const, users: page.map(toUserRow), nextCursor };
    },

    async get(actor: AccessActor, id: string) {
      return { ok: true as const, user: toUserRow(await findOwned(actor, id)) };
    },

    async findByEmail(orgId: string, email: string) {
      return db.prisma.user.findUnique({ where: { orgId_email: { orgId, email } } });
    },

    /**
     * Adds a person. The email of a removed person adds them back under the same id (history keeps pointing
     * at them) and revokes the keys they issued before the removal: an old key never regains write access.
     */
    async create(actor: AccessActor, input: CreateUserInput) {
      const now = new Date();
      let revokedKeyIds: string[] = [];
      let result;
      try {
        result = await transaction(db, async (tx) => {
          const existing = await tx.user.findUnique({
            where: { orgId_email: { orgId: actor.orgId, email: input.email } },
          });
          if (existing && !existing.removedAt) throw duplicateEmail(input.email);
          let user;
          if (existing) {
            const revoked = await tx.apiKey.updateManyAndReturn({
              where: { orgId: actor.orgId, createdById: existing.id, revokedAt: null },
              data: { revokedAt: now },
              select: { id: true, label: true },
            });
            for (const key of revoked) {
              await emit(tx, actor.orgId, 'apiKey.revoked', {
                apiKeyId: key.id,
                label: key.label,
                reason: 'user_readded',
                ...actorFields(actor),
                revokedAt: now.toISOString(),
              });
            }
            revokedKeyIds = revoked.map((k) => k.id);
            // Only a restore that still finds the person removed wins; a concurrent one reports a duplicate.
            const restored = await tx.user.updateManyAndReturn({
              where: { id: existing.id, removedAt: { not: null } },
              data: { removedAt: null, name: input.name !== undefined ? input.name : existing.name },
            });
            if (restored.length === 0) throw duplicateEmail(input.email);
            user = restored[0];
          } else {
            user = await tx.user.create({ data: { orgId: actor.orgId, email: input.email, name: input.name ?? null } });
          }
          await emit(tx, actor.orgId, 'user.created', {
            userId: user.id,
            email: user.email,
            name: user.name,
            restored: existing !== null,
            ...actorFields(actor),
            at: now.toISOString(),
          });
          return { user, restored: existing !== null };
        });
      } catch (err) {
        // A concurrent create of the same email: the unique index decides, the loser gets the usual 422.
        if (isUniqueViolation(err)) throw duplicateEmail(input.email);
        throw err;
      }
      if (revokedKeyIds.length) auth?.forget({ keyIds: revokedKeyIds });
      return { ok: true as const, userId: result.user.id, restored: result.restored, user: toUserRow(result.user) };
    },

    async update(actor: AccessActor, id: string, patch: UpdateUserInput) {
      if (patch.name === undefined)
        throw new ValidationError({ body: 'send at least one of: name' }, 'The patch is empty');
      await findOwned(actor, id);
      const user = await db.prisma.user.update({ where: { id }, data: { name: patch.name } });
      return { ok: true as const, userId: user.id, user: toUserRow(user) };
    },

    /**
     * Removes a person softly: history keeps their name, assignments stay, and the keys they issued keep
     * reading but get 403 key_creator_deleted on writes. Removing a removed person is a no-op that answers
     * the original time. A key cannot remove the person who issued it (it would lock itself out of writes).
     */
    async remove(actor: AccessActor, id: string) {
      if (actor.keyId !== null && actor.actorId === id) {
        throw conflict(
          'cannot_remove_key_creator',
          'This API key was issued by this person; use a key issued by someone else to remove them',
        );
      }
      const now = new Date();
      const removedAt = await transaction(db, async (tx) => {
        const user = await tx.user.findFirst({ where: { id, orgId: actor.orgId } });
        if (!user) throw notFound('User');
        if (user.removedAt) return user.removedAt;
        const changed = await tx.user.updateMany({ where: { id, removedAt: null }, data: { removedAt: now } });
        if (changed.count === 0) return (await tx.user.findUniqueOrThrow({ where: { id } })).removedAt ?? now;
        await emit(tx, actor.orgId, 'user.removed', {
          userId: user.id,
          email: user.email,
          name: user.name,
          ...actorFields(actor),
          removedAt: now.toISOString(),
        });
        return now;
      });
      auth?.forget({ creatorId: id });
      return { ok: true as const, userId: id, removedAt: removedAt.toISOString() };
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
