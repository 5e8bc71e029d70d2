// The status moves of an import that end a phase, each in one transaction with its event: failed (import.failed),
// validated, completed or partially_completed (import.completed).
import type { Database } from '../../db/database.ts';
import { transaction } from '../../db/transaction.ts';
import { emit } from '../../events/outbox.ts';
import type { RequestContext } from '../../core/context.ts';
import type { Import } from '../../generated/prisma/client.ts';
import { countActions } from './imports.repository.ts';
import { EMPTY_COUNTS, type ImportCounts, type ImportType } from './imports.schemas.ts';

/** Ends an import in progress as failed, once: an import already ended is left as it is. */
export async function failImport(db: Database, imp: Pick<Import, 'id' | 'orgId' | 'type'>, reason: string) {
  // Counted before the transaction: on an embedded database a query outside it would wait for it.
  const counts = await countActions(db.sql, imp.orgId, imp.id).catch(() => EMPTY_COUNTS);
  await transaction(db, async (tx) => {
    const now = new Date();
    const { count } = await tx.import.updateMany({
      where: { id: imp.id, orgId: imp.orgId, status: { in: ['validating', 'committing', 'validated'] } },
      data: {
        status: 'failed',
        failureReason: reason,
        completedAt: now,
        leaseOwner: null,
        leaseUntil: null,
        counts,
        commitPhase: null,
      },
    });
    if (count === 0) return;
    await emit(tx, imp.orgId, 'import.failed', {
      importId: imp.id,
      type: imp.type as ImportType,
      counts,
      reason,
      failedAt: now.toISOString(),
    });
  });
}

export async function markValidated(db: Database, imp: Pick<Import, 'id' | 'orgId'>, counts: ImportCounts) {
  await db.prisma.import.updateMany({
    where: { id: imp.id, orgId: imp.orgId, status: 'validating' },
    data: {
      status: 'validated',
      counts,
      rowsDone: counts.rows,
      rowsTotal: counts.rows,
      validatedAt: new Date(),
      leaseOwner: null,
      leaseUntil: null,
    },
  });
}

/** The end of a commit: completed, or partially_completed when rows in error were skipped. */
export async function completeImport(db: Database, imp: Pick<Import, 'id' | 'orgId' | 'type'>) {
  const counts = await countActions(db.sql, imp.orgId, imp.id);
  await transaction(db, async (tx) => {
    const status = counts.error > 0 ? 'partially_completed' : 'completed';
    const now = new Date();
    const { count } = await tx.import.updateMany({
      where: { id: imp.id, orgId: imp.orgId, status: 'committing' },
      data: { status, counts, completedAt: now, leaseOwner: null, leaseUntil: null, commitPhase: null },
    });
    if (count === 0) return;
    await emit(tx, imp.orgId, 'import.completed', {
      importId: imp.id,
      type: imp.type as ImportType,
      status,
      counts,
      completedAt: now.toISOString(),
    });
  });
}

/** The context background work on an import runs in: its organisation and the key that started the phase. */
export function importContext(imp: Import): RequestContext {
  return {
    orgId: imp.orgId,
    keyId: imp.committedByKeyId ?? imp.createdByKeyId,
    actorId: imp.actorId,
    requestId: `import:${imp.id}`,
  };
}
