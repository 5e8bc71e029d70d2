// The rules of a service reminder as pure functions: when it falls due by the meter and by the calendar, its
// status, and the materialised keys that let the list, the reading path and the calendar sweep find it by index.
import type { ServiceReminderStatus } from '../../generated/prisma/client.ts';

const DAY_MS = 86_400_000;

/** List order: OVERDUE, DUE_SOON, then the rest (OK, then SNOOZED). */
export const STATUS_RANK: Record<ServiceReminderStatus, number> = { OVERDUE: 0, DUE_SOON: 1, OK: 2, SNOOZED: 3 };
export const REMINDER_STATUSES = ['OK', 'DUE_SOON', 'OVERDUE', 'SNOOZED'] as const;

/** The due key of a reminder with no foreseeable due instant (meter only, no recent use): last in its rank. */
export const NO_DUE = new Date('9999-12-31T00:00:00.000Z');

/**
 * meterAlertAt of a meter interval still waiting for its first reading: below any reading, so the asset's next
 * accepted reading takes the reminder path and becomes the baseline.
 */
export const AWAITING_BASELINE = -1e300;

export interface ReminderTerms {
  meterInterval: number | null;
  dayInterval: number | null;
  dueSoonMeter: number | null;
  dueSoonDays: number | null;
  lastCompletedReading: number | null;
  lastCompletedAt: Date | null;
  snoozedUntil: Date | null;
  snoozedUntilReading: number | null;
}

/** The asset's meter as reminders see it: its latest accepted reading and the 30-day average daily use. */
export interface MeterView {
  reading: number;
  at: Date;
  /** Units per day over the last 30 days; null when the meter did not move. */
  perDay: number | null;
}

/** The meter's part of a reminder, kept on the row so that the calendar sweep never needs the meter. */
export interface MeterPart {
  meterStatus: ServiceReminderStatus | null;
  meterDueAt: Date | null;
  meterAlertAt: number | null;
}

export interface Evaluation extends MeterPart {
  lastCompletedReading: number | null;
  lastCompletedAt: Date | null;
  nextDueReading: number | null;
  nextDueAt: Date | null;
  snoozedUntil: Date | null;
  snoozedUntilReading: number | null;
  status: ServiceReminderStatus;
  statusRank: number;
  dueKey: Date;
  nextCheckAt: Date | null;
}

const worst = (a: ServiceReminderStatus, b: ServiceReminderStatus) => (STATUS_RANK[a] <= STATUS_RANK[b] ? a : b);

/** When a reading reaches `target`: forecast from the average daily use (in the past once it is reached). */
export function forecastAt(meter: MeterView | null, target: number | null): Date | null {
  if (!meter || target === null) return null;
  if (meter.reading >= target && !meter.perDay) return meter.at;
  if (!meter.perDay) return null;
  return new Date(meter.at.getTime() + ((target - meter.reading) / meter.perDay) * DAY_MS);
}

/** The meter's part: the baseline (the first accepted reading when none was given), the due reading, status. */
export function meterPart(terms: ReminderTerms, meter: MeterView | null) {
  if (terms.meterInterval === null) {
    return { baseline: null, nextDueReading: null, meterStatus: null, meterDueAt: null, meterAlertAt: null };
  }
  const baseline = terms.lastCompletedReading ?? meter?.reading ?? null;
  if (baseline === null) {
    return {
      baseline: null,
      nextDueReading: null,
      meterStatus: null,
      meterDueAt: null,
      meterAlertAt: AWAITING_BASELINE,
    };
  }
  const nextDueReading = baseline + terms.meterInterval;
  const soon = nextDueReading - (terms.dueSoonMeter ?? 0);
  const reading = meter?.reading ?? null;
  const meterStatus: ServiceReminderStatus =
    reading === null ? 'OK' : reading >= nextDueReading ? 'OVERDUE' : reading >= soon ? 'DUE_SOON' : 'OK';
  const meterAlertAt = meterStatus === 'OK' ? soon : meterStatus === 'DUE_SOON' ? nextDueReading : null;
  return { baseline, nextDueReading, meterStatus, meterDueAt: forecastAt(meter, nextDueReading), meterAlertAt };
}

/**
 * Evaluates a reminder at `now`. `meter` is the asset's meter (null: no accepted reading yet). With `keptMeter`
 * (the calendar sweep) the meter's part is taken as stored instead of recomputed.
 */
export function evaluate(
  terms: ReminderTerms,
  meter: MeterView | null,
  now: Date,
  keptMeter?: MeterPart & { nextDueReading: number | null },
): Evaluation {
  const m = keptMeter ? { ...keptMeter, baseline: terms.lastCompletedReading } : meterPart(terms, meter);
  const lastCompletedAt = terms.dayInterval !== null ? (terms.lastCompletedAt ?? now) : terms.lastCompletedAt;
  let calStatus: ServiceReminderStatus | null = null;
  let calNext: Date | null = null;
  let nextDueAt: Date | null = null;
  if (terms.dayInterval !== null && lastCompletedAt) {
    nextDueAt = new Date(lastCompletedAt.getTime() + terms.dayInterval * DAY_MS);
    const soonAt = new Date(nextDueAt.getTime() - (terms.dueSoonDays ?? 0) * DAY_MS);
    calStatus = now >= nextDueAt ? 'OVERDUE' : now >= soonAt ? 'DUE_SOON' : 'OK';
    calNext = calStatus === 'OK' ? soonAt : calStatus === 'DUE_SOON' ? nextDueAt : null;
  }
  // A snooze with both ends ends at whichever comes first; the reading end is known only with the meter.
  const byTime = terms.snoozedUntil !== null;
  const byReading = terms.snoozedUntilReading !== null;
  const timeLeft = !byTime || now < terms.snoozedUntil!;
  const readingLeft = !byReading || meter === null || meter.reading < terms.snoozedUntilReading!;
  const snoozed = (byTime || byReading) && timeLeft && readingLeft;
  const status: ServiceReminderStatus = snoozed ? 'SNOOZED' : worst(m.meterStatus ?? 'OK', calStatus ?? 'OK');
  const dues = [nextDueAt, m.meterDueAt].filter((d): d is Date => d !== null);
  const dueKey = dues.length > 0 ? new Date(Math.min(...dues.map((d) => d.getTime()))) : NO_DUE;
  return {
    lastCompletedReading: m.baseline,
    lastCompletedAt,
    nextDueReading: m.nextDueReading,
    nextDueAt,
    snoozedUntil: snoozed ? terms.snoozedUntil : null,
    snoozedUntilReading: snoozed ? terms.snoozedUntilReading : null,
    status,
    statusRank: STATUS_RANK[status],
    dueKey,
    meterStatus: m.meterStatus,
    meterDueAt: m.meterDueAt,
    meterAlertAt: snoozed && byReading ? terms.snoozedUntilReading : m.meterAlertAt,
    nextCheckAt: snoozed ? terms.snoozedUntil : calNext,
  };
}

/** The event a status change calls for, once per cycle: entering DUE_SOON or OVERDUE for the first time. */
export function transitionEvent(
  status: ServiceReminderStatus,
  notified: { dueSoonNotified: boolean; overdueNotified: boolean },
): 'service_reminder.due_soon' | 'service_reminder.overdue' | null {
  if (status === 'OVERDUE' && !notified.overdueNotified) return 'service_reminder.overdue';
  if (status === 'DUE_SOON' && !notified.dueSoonNotified && !notified.overdueNotified)
    return 'service_reminder.due_soon';
  return null;
}
