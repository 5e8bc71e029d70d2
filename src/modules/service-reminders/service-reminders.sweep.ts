import type { Database } from '../../db/database.ts';
import { transaction } from '../../db/transaction.ts';
import { keptMeter, termsOf, writeEvaluation } from './service-reminders.operations.ts';
import { evaluate } from './service-reminders.rules.ts';

/** Reminders re-evaluated per sweep transaction. */
export const SWEEP_BATCH = 500;

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
  return transaction(db, async (tx) => {
    const due = await tx.$queryRawUnsafe<{ id: string }[]>(SWEEP_CLAIM_SQL, now, batch);
    if (due.length === 0) return 0;
    const rows = await tx.serviceReminder.findMany({ where: { id: { in: due.map((d) => d.id) } } });
    for (const row of rows) {
      const ev = evaluate(termsOf(row), null, now, keptMeter(row));
      await writeEvaluation(tx, { orgId: row.orgId, actorId: null }, row, ev);
    }
    return rows.length;
  });
}
