// The life of a run on its connection row: the lease that keeps one run at a time per connection across instances
// (claimed atomically, renewed while running, taken over once a crashed run lets it lapse), the run row, and the
// end of a run with its failing/recovered events, in one transaction.
import type { Database } from '../../db/database.ts';
import { transaction } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { TelematicsConnection } from '../../generated/prisma/client.ts';
import { FAILING_AFTER } from './telematics.rules.ts';
import type { RunCounters } from './telematics-ingest.operations.ts';

const TAKEN_OVER = 'the instance running it stopped before it finished; the next run started over';

/** Takes the lease of one connection when free or lapsed; the connection row, or null when another run holds it. */
export async function claimConnection(db: Database, orgId: string, id: string, owner: string, leaseSec: number) {
  const [row] = await db.sql.query<TelematicsConnection>(
    `UPDATE telematics_connections SET "leaseOwner" = $3, "leaseUntil" = now() + make_interval(secs => $4)
     WHERE id = $1 AND "orgId" = $2 AND ("leaseUntil" IS NULL OR "leaseUntil" < now()) RETURNING *`,
    [id, orgId, owner, leaseSec],
  );
  return row ?? null;
}

/** The scheduler's claim: up to `limit` enabled, due connections whose lease is free, skipping rows others hold. */
export function claimDue(db: Database, owner: string, leaseSec: number, limit: number) {
  return db.sql.query<TelematicsConnection>(
    `WITH due AS (
       SELECT id FROM telematics_connections
       WHERE enabled AND "nextRunAt" <= now() AND ("leaseUntil" IS NULL OR "leaseUntil" < now())
       ORDER BY "nextRunAt" LIMIT $3 FOR UPDATE SKIP LOCKED
     )
     UPDATE telematics_connections c SET "leaseOwner" = $1, "leaseUntil" = now() + make_interval(secs => $2)
     FROM due WHERE c.id = due.id RETURNING c.*`,
    [owner, leaseSec, limit],
  );
}

/** Extends the lease; false when this owner no longer holds it (it lapsed and another instance took over). */
export async function renewLease(db: Database, id: string, owner: string, leaseSec: number): Promise<boolean> {
  const rows = await db.sql.query(
    `UPDATE telematics_connections SET "leaseUntil" = now() + make_interval(secs => $3)
     WHERE id = $1 AND "leaseOwner" = $2 RETURNING 1`,
    [id, owner, leaseSec],
  );
  return rows.length > 0;
}

/** Starts a run under a held lease: a run left RUNNING by a crashed instance is marked FAILED first. */
export async function beginRun(db: Database, c: TelematicsConnection, trigger: 'manual' | 'scheduled') {
  return transaction(db, async (tx) => {
    await tx.telematicsRun.updateMany({
      where: { connectionId: c.id, status: 'RUNNING' },
      data: { status: 'FAILED', finishedAt: new Date(), error: TAKEN_OVER },
    });
    return tx.telematicsRun.create({ data: { orgId: c.orgId, connectionId: c.id, status: 'RUNNING', trigger } });
  });
}

/** The running run of a connection (the one a sync asked for while it runs answers with). */
export async function runningRun(db: Database, connectionId: string) {
  return db.prisma.telematicsRun.findFirst({
    where: { connectionId, status: 'RUNNING' },
    orderBy: { startedAt: 'desc' },
    select: { id: true },
  });
}

/**
 * Ends a run: its status and counters, the connection's last run, next run, failure streak and lease; after
 * FAILING_AFTER failures in a row telematics_connection.failing (once per streak), and on the next success
 * telematics_connection.recovered.
 */
export async function finishRun(
  db: Database,
  c: TelematicsConnection,
  runId: string,
  owner: string,
  counters: RunCounters,
  error: string | null,
  interrupted = false,
) {
  const now = new Date();
  await transaction(db, async (tx) => {
    const [current] = await tx.$queryRawUnsafe<TelematicsConnection[]>(
      `SELECT * FROM telematics_connections WHERE id = $1 FOR UPDATE`,
      c.id,
    );
    await tx.telematicsRun.updateMany({
      where: { id: runId, status: 'RUNNING' },
      data: {
        status: error ? 'FAILED' : 'SUCCEEDED',
        finishedAt: now,
        error,
        pages: counters.pages,
        equipmentSeen: counters.equipmentSeen,
        matched: counters.matched,
        unmatched: counters.unmatched,
        readingsCreated: counters.readingsCreated,
        readingsSkipped: counters.readingsSkipped,
        faultsOpened: counters.faultsOpened,
        machineErrors: counters.machineErrors,
        errorSamples: counters.errorSamples,
      },
    });
    if (!current) return; // deleted while running
    // Taken over meanwhile: the instance that holds the lease now reports on the connection.
    if (current.leaseOwner !== owner) return;
    // Stopped by this instance's shutdown: not the feed's failure, so no streak, no event; due again at once.
    if (interrupted) {
      await tx.telematicsConnection.update({
        where: { id: c.id },
        data: { leaseOwner: null, leaseUntil: null, nextRunAt: now },
      });
      return;
    }
    const failures = error ? current.consecutiveFailures + 1 : 0;
    const notifyFailing = error !== null && failures >= FAILING_AFTER && !current.failingNotified;
    const notifyRecovered = error === null && current.failingNotified;
    await tx.telematicsConnection.update({
      where: { id: c.id },
      data: {
        lastRunAt: now,
        lastSuccessAt: error ? undefined : now,
        lastError: error,
        consecutiveFailures: failures,
        failingNotified: error ? current.failingNotified || notifyFailing : false,
        nextRunAt: new Date(now.getTime() + current.pollMinutes * 60_000),
        leaseOwner: null,
        leaseUntil: null,
      },
    });
    if (notifyFailing)
      await emit(tx, c.orgId, 'telematics_connection.failing', {
        connectionId: c.id,
        name: current.name,
        consecutiveFailures: failures,
        lastError: error,
        lastSuccessAt: current.lastSuccessAt?.toISOString() ?? null,
        at: now.toISOString(),
      });
    if (notifyRecovered)
      await emit(tx, c.orgId, 'telematics_connection.recovered', {
        connectionId: c.id,
        name: current.name,
        failedRuns: current.consecutiveFailures,
        at: now.toISOString(),
      });
  });
  // With read replicas: the organisation's next reads wait for a replica that has the run's outcome.
  await db.replicas?.noteWrite(c.orgId);
}
