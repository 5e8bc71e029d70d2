import type { Prisma } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import type { EventData } from '../../events/catalog.ts';
import type { NotificationRecipient } from './notification-transport.adapter.ts';

/** Renewal dates this close (or closer) produce a heads-up. */
export const RENEWAL_WINDOW_DAYS = 30;
const DAY_MS = 24 * 3600 * 1000;

async function recipientsOf(tx: Tx, orgId: string): Promise<NotificationRecipient[]> {
  const users = await tx.user.findMany({
    where: { orgId, removedAt: null },
    select: { id: true, email: true, name: true },
    orderBy: { createdAt: 'asc' },
  });
  return users.map((u) => ({ userId: u.id, email: u.email, name: u.name }));
}

/**
 * Queues the push and email notifications of a new flag as PENDING rows in the flag's own transaction:
 * they exist exactly when the flag does, and the sender job delivers them after commit, so a slow or
 * failing provider never touches the request. Several flags raised together: one recipients read, one insert.
 */
export async function queueFlagsNotifications(
  tx: Tx,
  orgId: string,
  flags: EventData<'flag.created'>[],
): Promise<void> {
  if (flags.length === 0) return;
  const recipients = await recipientsOf(tx, orgId);
  await tx.notification.createMany({
    data: flags.flatMap((flag) => {
      const label = flag.severity === 'AUTO_PM' ? 'Preventive maintenance due' : `${flag.severity} flag`;
      const subject = `${label}: ${flag.assetNickname}`;
      const body = [
        `${label} on ${flag.assetNickname}.`,
        flag.reason ? `Note: ${flag.reason}` : null,
        flag.raisedBy.name ? `Raised by ${flag.raisedBy.name} at ${flag.raisedAt}.` : `Raised at ${flag.raisedAt}.`,
      ]
        .filter(Boolean)
        .join('\n');
      const payload = { ...flag, recipients } as unknown as Prisma.InputJsonValue;
      return (['PUSH', 'EMAIL'] as const).map((channel) => ({
        orgId,
        channel,
        kind: 'flag.created',
        subject,
        body,
        payload,
        dedupeKey: `flag:${flag.flagId}:${channel}`,
      }));
    }),
    skipDuplicates: true,
  });
}

const RENEWALS = [
  { field: 'registrationExpiresAt', kind: 'registration', label: 'Registration' },
  { field: 'insuranceExpiresAt', kind: 'insurance', label: 'Insurance' },
] as const;

/**
 * Queues one EMAIL heads-up per renewal date falling within the next 30 days, for assets in service or
 * out of service. The dedupe key names the asset, the kind and the date, and the unique index on
 * (orgId, dedupeKey) makes "once per renewal date" hold across sweeps, readings and processes; a changed
 * date is a new renewal and gets its own heads-up. Returns how many rows were created.
 */
export async function queueRenewalHeadsUps(
  db: Tx,
  scope: { orgId?: string; assetId?: string } = {},
  now = new Date(),
): Promise<number> {
  const until = new Date(now.getTime() + RENEWAL_WINDOW_DAYS * DAY_MS);
  const assets = await db.asset.findMany({
    where: {
      ...(scope.orgId ? { orgId: scope.orgId } : {}),
      ...(scope.assetId ? { id: scope.assetId } : {}),
      lifecycleStatus: { in: ['IN_SERVICE', 'OUT_OF_SERVICE'] },
      OR: [{ registrationExpiresAt: { gte: now, lte: until } }, { insuranceExpiresAt: { gte: now, lte: until } }],
    },
    select: {
      id: true,
      orgId: true,
      nickname: true,
      licensePlate: true,
      registrationExpiresAt: true,
      insuranceExpiresAt: true,
    },
  });
  const recipients = new Map<string, NotificationRecipient[]>();
  const rows: Prisma.NotificationCreateManyInput[] = [];
  for (const asset of assets) {
    for (const renewal of RENEWALS) {
      const date = asset[renewal.field];
      if (!date || date < now || date > until) continue;
      if (!recipients.has(asset.orgId)) recipients.set(asset.orgId, await recipientsOf(db, asset.orgId));
      const day = date.toISOString().slice(0, 10);
      const daysLeft = Math.max(0, Math.ceil((date.getTime() - now.getTime()) / DAY_MS));
      rows.push({
        orgId: asset.orgId,
        channel: 'EMAIL',
        kind: `asset.${renewal.kind}_renewal_due`,
        subject: `${renewal.label} for ${asset.nickname} expires on ${day}`,
        body: `${renewal.label} for ${asset.nickname}${asset.licensePlate ? ` (${asset.licensePlate})` : ''} expires on ${day}, in ${daysLeft} day(s).`,
        payload: {
          assetId: asset.id,
          assetNickname: asset.nickname,
          renewal: renewal.kind,
          expiresAt: date.toISOString(),
          daysLeft,
          recipients: recipients.get(asset.orgId),
        } as unknown as Prisma.InputJsonValue,
        dedupeKey: `renewal:${renewal.kind}:${asset.id}:${day}`,
      });
    }
  }
  if (rows.length === 0) return 0;
  const { count } = await db.notification.createMany({ data: rows, skipDuplicates: true });
  return count;
}
