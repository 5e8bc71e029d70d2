import type { ServiceReminder } from '../../generated/prisma/client.ts';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { ApiError, notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import {
  completeReminder,
  lockReminders,
  readMeter,
  termsOf,
  writeEvaluation,
} from './service-reminders.operations.ts';
import { evaluate, forecastAt, type ReminderTerms } from './service-reminders.rules.ts';
import { listReminders, reminderCursor, urgencyKey } from './service-reminders.repository.ts';
import { sweepCalendar, sweepCalendarTick } from './service-reminder-sweep.job.ts';
import {
  NEEDS_INTERVAL,
  toCompletionRow,
  toReminderRow,
  type CompleteReminderInput,
  type CreateReminderInput,
  type ListRemindersFilter,
  type SnoozeReminderInput,
  type UpdateReminderInput,
} from './service-reminders.schemas.ts';

/** A reference in the body to another organisation's (or no) asset, task or work order: 404, naming the field. */
export const missingReference = (field: string, what: string) =>
  new ApiError(404, 'not_found', `${what} not found`, {
    fieldErrors: { [field]: `no ${what} with this id in your organisation` },
  });

const RETIRED = ['ARCHIVED', 'SOLD'];

/** The interval rules shared by reminders and program items: at least one interval; no meter on a meterless asset. */
export function checkIntervals(t: { meterInterval?: number | null; dayInterval?: number | null }, meterType?: string) {
  if (t.meterInterval == null && t.dayInterval == null)
    throw new ValidationError(
      { meterInterval: NEEDS_INTERVAL, dayInterval: NEEDS_INTERVAL },
      'A reminder needs an interval',
    );
  if (meterType === 'NONE' && t.meterInterval != null)
    throw new ValidationError({ meterInterval: 'this asset has no meter (meterType NONE): use dayInterval' });
}

export async function ownedTask(tx: Tx, orgId: string, id: string) {
  const task = await tx.serviceTask.findFirst({ where: { id, orgId } });
  if (!task) throw missingReference('serviceTaskId', 'service task');
  return task;
}

export function createServiceReminderService({ db, clock }: Pick<ServiceDeps, 'db' | 'clock'>) {
  async function lockOwned(tx: Tx, ctx: RequestContext, id: string): Promise<ServiceReminder> {
    const [r] = await lockReminders(tx, ctx.orgId, [id]);
    if (!r) throw notFound('Service reminder');
    return r;
  }
  const result = (r: ServiceReminder) => ({ ok: true as const, serviceReminderId: r.id, status: r.status });

  return {
    async create(ctx: RequestContext, input: CreateReminderInput) {
      checkIntervals(input);
      const r = await transaction(db, async (tx) => {
        const asset = await tx.asset.findFirst({ where: { id: input.assetId, orgId: ctx.orgId } });
        if (!asset) throw missingReference('assetId', 'asset');
        checkIntervals(input, asset.meterType);
        await ownedTask(tx, ctx.orgId, input.serviceTaskId);
        return insertReminder(tx, ctx, asset, input, clock.now());
      });
      return result(r);
    },

    async get(ctx: RequestContext, id: string) {
      const r = await db.prisma.serviceReminder.findFirst({
        where: { id, orgId: ctx.orgId },
        include: { serviceTask: { select: { name: true } } },
      });
      if (!r) throw notFound('Service reminder');
      const [meter, last] = await Promise.all([
        readMeter(db.prisma, r.assetId, clock.now()),
        db.prisma.serviceCompletion.findFirst({
          where: { reminderId: r.id },
          orderBy: [{ completedAt: 'desc' }, { id: 'desc' }],
        }),
      ]);
      // Fresh forecast from the last 30 days (the list shows the estimate made at the reminder's last change).
      const dues = [r.nextDueAt, forecastAt(meter, r.nextDueReading)].filter((d): d is Date => d !== null);
      const forecast = dues.length > 0 ? new Date(Math.min(...dues.map((d) => d.getTime()))) : null;
      return {
        ok: true as const,
        serviceReminder: {
          ...toReminderRow(r, r.serviceTask.name, forecast),
          lastCompletion: last ? toCompletionRow(last) : null,
        },
      };
    },

    async list(ctx: RequestContext, query: ListRemindersFilter) {
      const rows = await listReminders(db.sql, ctx.orgId, query, reminderCursor(query.cursor));
      const { page, nextCursor } = paginate(rows, query.limit, urgencyKey);
      return { ok: true as const, serviceReminders: page.map((r) => toReminderRow(r, r.serviceTaskName)), nextCursor };
    },

    async history(ctx: RequestContext, id: string, query: { limit: number; cursor?: string }) {
      const r = await db.prisma.serviceReminder.findFirst({ where: { id, orgId: ctx.orgId }, select: { id: true } });
      if (!r) throw notFound('Service reminder');
      const after = timeIdCursor(decodeCursor(query.cursor, 2));
      const rows = await db.prisma.serviceCompletion.findMany({
        where: {
          reminderId: id,
          ...(after
            ? { OR: [{ completedAt: { lt: after[0] } }, { completedAt: after[0], id: { lt: after[1] } }] }
            : {}),
        },
        orderBy: [{ completedAt: 'desc' }, { id: 'desc' }],
        take: query.limit + 1,
      });
      const { page, nextCursor } = paginate(rows, query.limit, (c) => [c.completedAt.toISOString(), c.id]);
      return { ok: true as const, serviceReminderId: id, history: page.map(toCompletionRow), nextCursor };
    },

    async update(ctx: RequestContext, id: string, patch: UpdateReminderInput) {
      const r = await transaction(db, async (tx) => {
        const before = await lockOwned(tx, ctx, id);
        if (patch.serviceTaskId) await ownedTask(tx, ctx.orgId, patch.serviceTaskId);
        const terms: ReminderTerms = { ...termsOf(before) };
        for (const k of [
          'meterInterval',
          'dayInterval',
          'dueSoonMeter',
          'dueSoonDays',
          'lastCompletedReading',
          'lastCompletedAt',
        ] as const) {
          if (patch[k] !== undefined) (terms as unknown as Record<string, unknown>)[k] = patch[k];
        }
        const asset = await tx.asset.findUniqueOrThrow({ where: { id: before.assetId }, select: { meterType: true } });
        checkIntervals(terms, asset.meterType);
        const now = clock.now();
        const ev = evaluate(terms, await readMeter(tx, before.assetId, now), now);
        // Terms set by hand override the program's item for this asset: later item changes no longer reach it.
        const detach = Object.keys(patch).some((k) => k !== 'serviceTaskId');
        const after = await writeEvaluation(tx, ctx, before, ev, {
          data: {
            ...terms,
            ...(patch.serviceTaskId ? { serviceTaskId: patch.serviceTaskId } : {}),
            ...(detach ? { serviceProgramItemId: null } : {}),
          },
        });
        return after!;
      });
      return result(r);
    },

    async remove(ctx: RequestContext, id: string) {
      await transaction(db, async (tx) => {
        await lockOwned(tx, ctx, id);
        await tx.serviceReminder.delete({ where: { id } });
      });
      return { ok: true as const, serviceReminderId: id };
    },

    async complete(ctx: RequestContext, id: string, input: CompleteReminderInput) {
      const r = await transaction(db, async (tx) => {
        const before = await lockOwned(tx, ctx, id);
        if (input.workOrderId) {
          const wo = await tx.workOrder.findFirst({ where: { id: input.workOrderId, orgId: ctx.orgId } });
          if (!wo) throw missingReference('workOrderId', 'work order');
        }
        return completeReminder(tx, ctx, before, input, clock.now());
      });
      return { ...result(r.reminder), completionId: r.completionId, cycle: r.reminder.cycle };
    },

    async snooze(ctx: RequestContext, id: string, input: SnoozeReminderInput) {
      const r = await transaction(db, async (tx) => {
        const before = await lockOwned(tx, ctx, id);
        const now = clock.now();
        const meter = await readMeter(tx, before.assetId, now);
        const until = input.until ?? null;
        const untilReading = input.untilReading ?? null;
        if (until && until <= now) throw new ValidationError({ until: 'must be in the future' });
        if (untilReading !== null && (before.meterInterval === null || (meter && untilReading <= meter.reading)))
          throw new ValidationError({
            untilReading:
              before.meterInterval === null
                ? 'this reminder has no meter interval'
                : `must be above the current reading (${meter!.reading})`,
          });
        const terms = { ...termsOf(before), snoozedUntil: until, snoozedUntilReading: untilReading };
        return (await writeEvaluation(tx, ctx, before, evaluate(terms, meter, now), {}))!;
      });
      return result(r);
    },

    /** One tick of the calendar sweep (the scheduler's job; tests call it with a moved clock). */
    sweep: (now = clock.now(), batch?: number) => sweepCalendar(db, now, batch),

    /** The scheduler's tick: batches until nothing more is due or the tick's time budget is spent. */
    sweepTick: () => sweepCalendarTick(db, () => clock.now()),
  };
}

/** Inserts a reminder evaluated at `now` (its events fire if it starts DUE_SOON or OVERDUE). */
export async function insertReminder(
  tx: Tx,
  ctx: Pick<RequestContext, 'orgId' | 'actorId'>,
  asset: { id: string; lifecycleStatus: string },
  input: Partial<ReminderTerms> & { serviceTaskId: string; serviceProgramId?: string; serviceProgramItemId?: string },
  now: Date,
): Promise<ServiceReminder> {
  const terms: ReminderTerms = {
    meterInterval: input.meterInterval ?? null,
    dayInterval: input.dayInterval ?? null,
    dueSoonMeter: input.dueSoonMeter ?? null,
    dueSoonDays: input.dueSoonDays ?? null,
    lastCompletedReading: input.lastCompletedReading ?? null,
    lastCompletedAt: input.lastCompletedAt ?? null,
    snoozedUntil: null,
    snoozedUntilReading: null,
  };
  const ev = evaluate(terms, await readMeter(tx, asset.id, now), now);
  const created = await tx.serviceReminder.create({
    data: {
      orgId: ctx.orgId,
      assetId: asset.id,
      serviceTaskId: input.serviceTaskId,
      serviceProgramId: input.serviceProgramId ?? null,
      serviceProgramItemId: input.serviceProgramItemId ?? null,
      ...terms,
      ...ev,
      // Created with its status but no notification yet: writeEvaluation below emits what the status calls for.
      status: 'OK',
      suspended: RETIRED.includes(asset.lifecycleStatus),
    },
  });
  if (created.suspended) return created;
  return (await writeEvaluation(tx, ctx, created, ev))!;
}

export type ServiceReminderService = ReturnType<typeof createServiceReminderService>;
