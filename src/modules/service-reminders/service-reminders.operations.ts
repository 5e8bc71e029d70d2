// Writing a reminder's evaluation: the materialised status and keys, the once-per-cycle events (an atomic
// conditional UPDATE decides which transaction emits), the automatic work order of a program, completions.
// Shared by the reminders service, the reading path (hours), work-order completion and the calendar sweep.
import type { Prisma, ServiceReminder } from '../../generated/prisma/client.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import { ValidationError } from '../../core/errors.ts';
import { insertWorkOrder } from '../work-orders/work-orders.operations.ts';
import {
  AWAITING_BASELINE,
  evaluate,
  transitionEvent,
  type Evaluation,
  type MeterView,
  type ReminderTerms,
} from './service-reminders.rules.ts';

const DAY_MS = 86_400_000;
/** A completion may be stamped this far ahead of the server clock (device clock skew), as readings may. */
const FUTURE_SKEW_MS = 5 * 60 * 1000;

/** Who acts: a request's organisation and user, or the system (the sweep) with no user. */
export type Actor = Pick<RequestContext, 'orgId' | 'actorId'>;

export const termsOf = (r: ServiceReminder): ReminderTerms => ({
  meterInterval: r.meterInterval,
  dayInterval: r.dayInterval,
  dueSoonMeter: r.dueSoonMeter,
  dueSoonDays: r.dueSoonDays,
  lastCompletedReading: r.lastCompletedReading,
  lastCompletedAt: r.lastCompletedAt,
  snoozedUntil: r.snoozedUntil,
  snoozedUntilReading: r.snoozedUntilReading,
});

/**
 * The asset's meter as reminders see it: the latest accepted reading (readings held for review do not count
 * until approved) and the average daily use over the 30 days before `now` (accepted positive deltas / 30).
 */
export async function readMeter(tx: Tx, assetId: string, now: Date): Promise<MeterView | null> {
  const rows = await tx.$queryRawUnsafe<{ reading: number; at: Date; used: number | null }[]>(
    `SELECT l."hoursReading" AS reading, l."loggedAt" AS at,
       (SELECT SUM(m.delta) FROM meter_logs m WHERE m."assetId" = $1 AND m."loggedAt" > $2::timestamptz
          AND m."reviewStatus" IN ('NONE', 'APPROVED') AND m.delta > 0)::float8 AS used
     FROM meter_logs l JOIN assets a ON a.id = l."assetId" AND a."meterType" <> 'NONE'
     WHERE l."assetId" = $1 AND l."reviewStatus" IN ('NONE', 'APPROVED')
     ORDER BY l."loggedAt" DESC, l.id DESC LIMIT 1`,
    assetId,
    new Date(now.getTime() - 30 * DAY_MS),
  );
  const row = rows[0];
  if (!row) return null;
  return { reading: Number(row.reading), at: new Date(row.at), perDay: row.used ? Number(row.used) / 30 : null };
}

export const eventData = (r: ServiceReminder) => ({
  serviceReminderId: r.id,
  assetId: r.assetId,
  serviceTaskId: r.serviceTaskId,
  status: r.status,
  nextDueReading: r.nextDueReading,
  nextDueAt: r.nextDueAt?.toISOString() ?? null,
  cycle: r.cycle,
});

export interface WriteOptions {
  /** Term changes written with the evaluation (PATCH, completion, snooze). */
  data?: Prisma.ServiceReminderUncheckedUpdateManyInput;
  /** A new cycle (completion): the events of the cycle may fire again. */
  newCycle?: boolean;
}

/**
 * Writes an evaluation. The UPDATE is conditional on the cycle and notification flags read before, so of two
 * transactions evaluating the same reminder only one writes and emits (the other gets null); entering DUE_SOON
 * or OVERDUE emits its event once per cycle and, for a program with autoWorkOrder, opens the cycle's work order.
 */
export async function writeEvaluation(
  tx: Tx,
  actor: Actor,
  before: ServiceReminder,
  ev: Evaluation,
  options: WriteOptions = {},
): Promise<ServiceReminder | null> {
  const notified = options.newCycle
    ? { dueSoonNotified: false, overdueNotified: false }
    : { dueSoonNotified: before.dueSoonNotified, overdueNotified: before.overdueNotified };
  const event = transitionEvent(ev.status, notified);
  const { count } = await tx.serviceReminder.updateMany({
    where: {
      id: before.id,
      cycle: before.cycle,
      dueSoonNotified: before.dueSoonNotified,
      overdueNotified: before.overdueNotified,
    },
    data: {
      ...options.data,
      ...ev,
      ...(options.newCycle ? { cycle: before.cycle + 1 } : {}),
      dueSoonNotified: notified.dueSoonNotified || event !== null,
      overdueNotified: notified.overdueNotified || event === 'service_reminder.overdue',
    },
  });
  if (count === 0) return null;
  const after = await tx.serviceReminder.findUniqueOrThrow({ where: { id: before.id } });
  if (event) {
    await emit(tx, actor.orgId, event, eventData(after));
    await openCycleWorkOrder(tx, actor, after);
  }
  return after;
}

/** A program with autoWorkOrder opens one work order per reminder cycle; the (reminder, cycle) key forbids two. */
async function openCycleWorkOrder(tx: Tx, actor: Actor, r: ServiceReminder): Promise<void> {
  if (!r.serviceProgramId) return;
  const program = await tx.serviceProgram.findFirst({ where: { id: r.serviceProgramId, autoWorkOrder: true } });
  if (!program) return;
  const existing = await tx.workOrderServiceReminder.findFirst({ where: { reminderId: r.id, cycle: r.cycle } });
  if (existing) return;
  const task = await tx.serviceTask.findUniqueOrThrow({ where: { id: r.serviceTaskId }, select: { name: true } });
  const createdById = actor.actorId ?? (await programOwner(tx, actor.orgId));
  if (!createdById) return;
  const wo = await insertWorkOrder(
    tx,
    { orgId: actor.orgId, actorId: createdById, keyId: 'system', requestId: 'service-reminders' },
    {
      title: `${task.name} (${program.name})`.slice(0, 200),
      description: `Opened automatically: service reminder ${r.id} is ${r.status} (cycle ${r.cycle}).`,
      assetId: r.assetId,
      dueAt: r.nextDueAt,
    },
  );
  await tx.workOrderServiceReminder.create({
    data: { workOrderId: wo.id, reminderId: r.id, orgId: actor.orgId, cycle: r.cycle },
  });
}

/** Work orders need a creator: the sweep's orders are recorded as created by the organisation's first user. */
async function programOwner(tx: Tx, orgId: string): Promise<string | null> {
  const user = await tx.user.findFirst({ where: { orgId }, orderBy: { createdAt: 'asc' }, select: { id: true } });
  return user?.id ?? null;
}

/**
 * The reading path: an accepted reading reached the meter alert of some reminders of the (locked) asset.
 * Runs in the reading's transaction, so the transitions commit with it.
 */
export async function applyReading(
  tx: Tx,
  actor: Actor,
  assetId: string,
  { hoursReading: reading, loggedAt: at }: { hoursReading: number; loggedAt: Date },
): Promise<void> {
  const due = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM service_reminders WHERE "assetId" = $1 AND "meterAlertAt" IS NOT NULL AND NOT suspended
       AND "meterAlertAt" <= $2::float8 ORDER BY id FOR UPDATE`,
    assetId,
    reading,
  );
  if (due.length === 0) return;
  const now = new Date();
  const meter = await readMeter(tx, assetId, now);
  const view: MeterView = { reading, at, perDay: meter?.perDay ?? null };
  const rows = await tx.serviceReminder.findMany({ where: { id: { in: due.map((d) => d.id) } } });
  for (const row of rows) await writeEvaluation(tx, actor, row, evaluate(termsOf(row), view, now));
}

/** Whether an accepted reading of the asset would change a reminder (POST /hours' cheap paths ask first). */
export const REMINDER_ALERT_SQL = `EXISTS (SELECT 1 FROM service_reminders r WHERE r."assetId" = assets.id
  AND r."meterAlertAt" IS NOT NULL AND NOT r.suspended AND r."meterAlertAt" <= $4::float8)`;

/** The guarded reading statement's condition: a held reading, or no reminder alert reached ($n placeholders). */
export const noReminderAlertSql = (reviewStatus: string, assetId: string, reading: string) =>
  `(${reviewStatus}::"ReviewStatus" <> 'NONE' OR NOT EXISTS (SELECT 1 FROM service_reminders r WHERE r."assetId" = ${assetId}
    AND r."meterAlertAt" IS NOT NULL AND NOT r.suspended AND r."meterAlertAt" <= ${reading}::float8))`;

export interface CompletionInput {
  reading?: number | null;
  at?: Date | null;
  workOrderId?: string | null;
  note?: string | null;
}

/**
 * Completes a (locked) reminder: a history entry, a new cycle counted from the completion, service_reminder.completed.
 * The reading defaults to the asset's current accepted reading and the time to now. A reading below the last
 * completion's is refused (422): history keeps the meter moving forward.
 */
export async function completeReminder(
  tx: Tx,
  actor: Actor,
  r: ServiceReminder,
  input: CompletionInput,
  now = new Date(),
): Promise<{ reminder: ServiceReminder; completionId: string }> {
  const meter = await readMeter(tx, r.assetId, now);
  const reading = input.reading ?? meter?.reading ?? null;
  const at = input.at ?? now;
  const errors: Record<string, string> = {};
  if (at.getTime() > now.getTime() + FUTURE_SKEW_MS) errors.at = 'cannot be in the future';
  if (reading !== null && r.lastCompletedReading !== null && reading < r.lastCompletedReading)
    errors.reading = `cannot be below the last completion's reading (${r.lastCompletedReading})`;
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  const completion = await tx.serviceCompletion.create({
    data: {
      orgId: actor.orgId,
      reminderId: r.id,
      cycle: r.cycle,
      completedAt: at,
      reading,
      workOrderId: input.workOrderId ?? null,
      note: input.note ?? null,
      completedById: actor.actorId,
    },
  });
  const terms = {
    ...termsOf(r),
    lastCompletedReading: r.meterInterval !== null ? reading : r.lastCompletedReading,
    lastCompletedAt: at,
    snoozedUntil: null,
    snoozedUntilReading: null,
  };
  const ev = evaluate(terms, meter, now);
  const after = await writeEvaluation(tx, actor, r, ev, { newCycle: true });
  if (!after) throw new Error(`service reminder ${r.id} changed under its lock`);
  await emit(tx, actor.orgId, 'service_reminder.completed', {
    ...eventData(after),
    completedAt: at.toISOString(),
    completedReading: reading,
    workOrderId: input.workOrderId ?? null,
    completedById: actor.actorId,
  });
  return { reminder: after, completionId: completion.id };
}

/** Locks reminders of the organisation by id, in id order (no deadlock between two transactions). */
export async function lockReminders(tx: Tx, orgId: string, ids: string[]): Promise<ServiceReminder[]> {
  if (ids.length === 0) return [];
  const placeholders = ids.map((_, i) => `$${i + 2}`).join(', ');
  const locked = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM service_reminders WHERE "orgId" = $1 AND id IN (${placeholders}) ORDER BY id FOR UPDATE`,
    orgId,
    ...ids,
  );
  return tx.serviceReminder.findMany({ where: { id: { in: locked.map((l) => l.id) } }, orderBy: { id: 'asc' } });
}

/**
 * A work order became DONE (by PATCH, by a repair, or created DONE): the reminders it covers complete at the
 * asset's current reading, in the same transaction.
 */
export async function completeForWorkOrder(tx: Tx, ctx: RequestContext, workOrderId: string): Promise<void> {
  const links = await tx.workOrderServiceReminder.findMany({ where: { workOrderId }, select: { reminderId: true } });
  if (links.length === 0) return;
  const reminders = await lockReminders(
    tx,
    ctx.orgId,
    links.map((l) => l.reminderId),
  );
  for (const r of reminders) await completeReminder(tx, ctx, r, { workOrderId });
}

/** The meter alert of a kept meter part (the sweep re-evaluates without the meter). */
export function keptMeter(r: ServiceReminder) {
  const meterAlertAt =
    r.meterInterval === null
      ? null
      : r.nextDueReading === null
        ? AWAITING_BASELINE
        : r.meterStatus === 'OVERDUE'
          ? null
          : r.meterStatus === 'DUE_SOON'
            ? r.nextDueReading
            : r.nextDueReading - (r.dueSoonMeter ?? 0);
  return { meterStatus: r.meterStatus, meterDueAt: r.meterDueAt, meterAlertAt, nextDueReading: r.nextDueReading };
}

/**
 * An asset's lifecycle moved in or out of ARCHIVED/SOLD. Retired, its reminders freeze: out of the list, the sweep
 * and the reading path, no events. Back in service, each is re-evaluated at once against the current meter.
 */
export async function setAssetRetired(tx: Tx, actor: Actor, assetId: string, retired: boolean): Promise<void> {
  if (retired) {
    await tx.serviceReminder.updateMany({ where: { assetId }, data: { suspended: true } });
    return;
  }
  const ids = await tx.serviceReminder.findMany({ where: { assetId, suspended: true }, select: { id: true } });
  if (ids.length === 0) return;
  const now = new Date();
  const meter = await readMeter(tx, assetId, now);
  for (const r of await lockReminders(
    tx,
    actor.orgId,
    ids.map((i) => i.id),
  )) {
    await writeEvaluation(tx, actor, r, evaluate(termsOf(r), meter, now), { data: { suspended: false } });
  }
}
