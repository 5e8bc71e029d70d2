// The service reminders a work order covers: stored in work_order_service_reminders, completed with
// the order when it becomes DONE (work-order-completion.operations.ts recordCompletion).
import type { Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';

/**
 * Replaces the order's links (manual ones; an automatic order's own link keeps its cycle). Each reminder must be
 * of the organisation and, when the order has an asset, of that asset: 422 naming the field otherwise.
 */
export async function linkReminders(
  tx: Tx,
  ctx: RequestContext,
  workOrderId: string,
  assetId: string | null,
  reminderIds: string[],
): Promise<void> {
  const ids = [...new Set(reminderIds)];
  const found = await tx.serviceReminder.findMany({
    where: { orgId: ctx.orgId, id: { in: ids } },
    select: { id: true, assetId: true },
  });
  const byId = new Map(found.map((r) => [r.id, r]));
  for (const [n, id] of ids.entries()) {
    const r = byId.get(id);
    if (!r)
      throw new ValidationError({
        [`serviceReminderIds.${n}`]: 'no service reminder with this id in your organisation',
      });
    if (assetId && r.assetId !== assetId)
      throw new ValidationError({ [`serviceReminderIds.${n}`]: 'belongs to another asset than the work order' });
  }
  await tx.workOrderServiceReminder.deleteMany({ where: { workOrderId, reminderId: { notIn: ids } } });
  await tx.workOrderServiceReminder.createMany({
    data: ids.map((reminderId) => ({ workOrderId, reminderId, orgId: ctx.orgId })),
    skipDuplicates: true,
  });
}

export async function linkedReminderIds(tx: Tx, workOrderId: string): Promise<string[]> {
  const rows = await tx.workOrderServiceReminder.findMany({
    where: { workOrderId },
    select: { reminderId: true },
    orderBy: { reminderId: 'asc' },
  });
  return rows.map((r) => r.reminderId);
}
