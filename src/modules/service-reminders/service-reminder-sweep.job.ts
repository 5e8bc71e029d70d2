import type { Database } from '../../db/database.ts';
import { transaction } from '../../db/transaction.ts';
import { keptMeter, termsOf, writeEvaluation } from './service-reminders.operations.ts';
import { evaluate } from './service-reminders.rules.ts';

/** Reminders re-evaluated per sweep transaction (a few seconds of work at most, well inside its timeout). */
export const SWEEP_BATCH = 200;

/** How long one tick may keep taking batches: a backlog (a program applied to many assets) drains within ticks. */
export const SWEEP_TICK_BUDGET_MS = 40_000;

/** The sweep's one query per tick: a range of service_reminders_calendar_idx ($1 now, $2 batch). */
export const SWEEP_CLAIM_SQL = `SELECT id FROM service_reminders
  WHERE "nextCheckAt" IS NOT NULL AND NOT suspended AND "nextCheckAt" <= $1::timestamptz
  ORDER BY "nextCheckAt" LIMIT $2 FOR UPDATE SKIP LOCKED`;

/**
 * The calendar sweep: the reminders whose next calendar change (DUE_SOON starts, due date, snooze end) has come,
 * found by one range of the partial index service_reminders_calendar_idx, oldest first, a bounded batch, locked
 * with SKIP LOCKED so that instances sweeping at once share the work instead of repeating it. Each is
 * re-evaluated with its kept meter part (the meter's changes are the reading path's) and written by
 * writeEvaluation's conditional UPDATE, which emits a transition's event once per cycle. Returns how many were
 * re-evaluated; a full batch means more are waiting for the next tick.
 */
export async function sweepCalendar(db: Database, now: Date, batch = SWEEP_BATCH): Promise<number> {
  const orgIds = await transaction(db, async (tx) => {
    const due = await tx.$queryRawUnsafe<{ id: string }[]>(SWEEP_CLAIM_SQL, now, batch);
    if (due.length === 0) return [];
    const rows = await tx.serviceReminder.findMany({ where: { id: { in: due.map((d) => d.id) } } });
    for (const row of rows) {
      const ev = evaluate(termsOf(row), null, now, keptMeter(row));
      await writeEvaluation(tx, { orgId: row.orgId, actorId: null }, row, ev);
    }
    return rows.map((r) => r.orgId);
  });
  // With read replicas: the organisations' next reads wait for a replica that has this batch.
  await db.replicas?.noteWrites(orgIds);
  return orgIds.length;
}

/**
 * One scheduler tick: batches until one comes back short (nothing more is due) or the tick's budget is spent
 * (the next tick goes on). Each batch is its own transaction, so a long backlog never holds one open.
 */
export async function sweepCalendarTick(
  db: Database,
  clock: () => Date,
  { batch = SWEEP_BATCH, budgetMs = SWEEP_TICK_BUDGET_MS } = {},
): Promise<number> {
  const started = Date.now();
  let total = 0;
  for (;;) {
    const done = await sweepCalendar(db, clock(), batch);
    total += done;
    if (done < batch || Date.now() - started >= budgetMs) return total;
  }
}
