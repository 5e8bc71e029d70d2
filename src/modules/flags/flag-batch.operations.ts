// Several flags raised together on one asset (the failed items of one inspection): the same rows, flag.created
// events and notifications as insertFlag gives each, in fewer statements, inside the caller's transaction.
import { randomUUID } from 'node:crypto';
import type { Flag } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emitMany } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { queueFlagsNotifications } from '../notifications/notifications.repository.ts';
import { SYSTEM_ACTOR, type NewFlag } from './flags.operations.ts';

/** Raised by the key's user (never bySystem); returns the flags in the order of `inputs`. */
export async function insertFlags(tx: Tx, ctx: RequestContext, inputs: NewFlag[]): Promise<Flag[]> {
  if (inputs.length === 0) return [];
  const raisedById = ctx.actorId ?? SYSTEM_ACTOR;
  const ids = inputs.map(() => randomUUID());
  const rows = await tx.flag.createManyAndReturn({
    data: inputs.map((input, i) => ({
      id: ids[i],
      orgId: ctx.orgId,
      assetId: input.asset.id,
      severity: input.severity,
      note: input.note ?? null,
      photoUrl: input.photoUrl ?? null,
      raisedById,
      lat: input.lat ?? null,
      lng: input.lng ?? null,
      accuracyM: input.accuracyM ?? null,
      pmDueReading: input.pmDueReading ?? null,
      dedupeKey: input.dedupeKey ?? null,
      inspectionId: input.inspectionId ?? null,
    })),
  });
  const byId = new Map(rows.map((f) => [f.id, f]));
  const flags = ids.map((id) => byId.get(id)!);
  const user =
    raisedById === SYSTEM_ACTOR
      ? null
      : await tx.user.findUnique({ where: { id: raisedById }, select: { name: true } });
  const raisedBy =
    raisedById === SYSTEM_ACTOR
      ? { userId: null, name: SYSTEM_ACTOR }
      : { userId: raisedById, name: user?.name ?? null };
  const payloads = flags.map((flag, i) => ({
    flagId: flag.id,
    assetId: flag.assetId,
    assetNickname: inputs[i].asset.nickname,
    severity: flag.severity,
    reason: flag.note,
    photoUrl: flag.photoUrl,
    raisedBy,
    raisedAt: flag.createdAt.toISOString(),
    pmDueReading: flag.pmDueReading,
  }));
  await emitMany(
    tx,
    ctx.orgId,
    payloads.map((data) => ({ type: 'flag.created' as const, data })),
  );
  await queueFlagsNotifications(tx, ctx.orgId, payloads);
  return flags;
}
