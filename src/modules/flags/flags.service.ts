import type { Flag } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, newestFirstKey, paginate, timeIdCursor } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { insertFlag, resolveFlag, SYSTEM_ACTOR } from './flags.operations.ts';
import { listFlags } from './flags.repository.ts';
import { photoAttachment } from '../attachments/attachments.operations.ts';
import { resolutionErrors } from './flags.rules.ts';
import { toFlagRow, type CreateFlagInput, type ListFlagsInput, type UpdateFlagInput } from './flags.schemas.ts';

export function createFlagService({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  async function findOwned(tx: Tx, ctx: RequestContext, id: string): Promise<Flag> {
    const flag = await tx.flag.findFirst({ where: { id, orgId: ctx.orgId } });
    if (!flag) throw notFound('Flag');
    return flag;
  }

  async function actorOf(tx: Tx, userId: string | null) {
    if (!userId) return null;
    if (userId === SYSTEM_ACTOR) return { userId: null, name: SYSTEM_ACTOR };
    const user = await tx.user.findUnique({ where: { id: userId }, select: { name: true } });
    return { userId, name: user?.name ?? null };
  }

  return {
    async list(ctx: RequestContext, query: ListFlagsInput) {
      const rows = await listFlags(db.sql, ctx.orgId, query, timeIdCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, newestFirstKey);
      return { ok: true as const, flags: page.map(toFlagRow), nextCursor };
    },

    async create(ctx: RequestContext, input: CreateFlagInput) {
      const flag = await transaction(db, async (tx) => {
        const asset = await tx.asset.findFirst({
          where: { id: input.assetId, orgId: ctx.orgId },
          select: { id: true, nickname: true },
        });
        if (!asset) throw new ValidationError({ assetId: 'no asset with this id in your organisation' });
        if (input.photoAttachmentId && input.photoUrl)
          throw new ValidationError({ photoAttachmentId: 'send either photoUrl or photoAttachmentId' });
        const photo = input.photoAttachmentId
          ? await photoAttachment(
              tx,
              ctx.orgId,
              { type: 'asset', id: asset.id },
              input.photoAttachmentId,
              config.publicBaseUrl,
            )
          : null;
        return insertFlag(tx, ctx, {
          asset,
          severity: input.severity,
          note: input.note,
          photoUrl: photo?.contentUrl ?? input.photoUrl,
          lat: input.geo?.lat,
          lng: input.geo?.lng,
          accuracyM: input.geo?.accuracyM,
        });
      });
      return { ok: true as const, flagId: flag.id };
    },

    async get(ctx: RequestContext, id: string) {
      const flag = await findOwned(db.prisma, ctx, id);
      const asset = await db.prisma.asset.findUniqueOrThrow({
        where: { id: flag.assetId },
        select: { id: true, nickname: true },
      });
      const raisedBy = (await actorOf(db.prisma, flag.raisedById))!;
      const resolvedBy =
        flag.status === 'RESOLVED'
          ? ((await actorOf(db.prisma, flag.resolvedById)) ?? { userId: null, name: null })
          : null;
      return { ok: true as const, flag: { ...toFlagRow(flag), asset, raisedBy, resolvedBy } };
    },

    /** PATCH is resolution only (spec): status RESOLVED, with the RED rules. */
    async update(ctx: RequestContext, id: string, input: UpdateFlagInput) {
      const flag = await transaction(db, async (tx) => {
        const current = await findOwned(tx, ctx, id);
        const errors = resolutionErrors(current, input);
        if (Object.keys(errors).length > 0)
          throw new ValidationError(errors, 'The flag cannot be resolved like this; see fieldErrors.');
        if (current.status === 'RESOLVED') throw alreadyResolved();
        const resolved = await resolveFlag(tx, ctx, current, {
          resolutionNote: input.resolutionNote ?? null,
          returnToServiceConfirmed: input.returnToServiceConfirmed,
        });
        if (!resolved) throw alreadyResolved();
        return resolved;
      });
      return { ok: true as const, flagId: flag.id, status: flag.status };
    },
  };
}

const alreadyResolved = () =>
  conflict('flag_already_resolved', 'This flag is already resolved; resolved flags cannot be changed or re-opened');

export type FlagService = ReturnType<typeof createFlagService>;
