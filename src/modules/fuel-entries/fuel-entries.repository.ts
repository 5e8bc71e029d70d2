import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import { keysetSql } from '../../core/pagination.ts';
import type { FuelEntryRow, ListFuelEntriesInput } from './fuel-entries.schemas.ts';

const ORDER = [{ column: '"fueledAt"', cast: 'timestamptz' }, { column: 'id' }];

/**
 * Newest first by fueledAt. Index per shape: by asset fuel_entries(orgId, assetId, fueledAt, id), by project
 * (orgId, projectId, fueledAt, id), else (orgId, fueledAt, id); the cursor is a row-value range on it.
 */
export async function listFuelEntries(
  sql: SqlRunner,
  orgId: string,
  query: ListFuelEntriesInput,
  after: [Date, string] | null,
): Promise<FuelEntryRow[]> {
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.assetId) where.push(`"assetId" = $${params.push(query.assetId)}`);
  if (query.projectId) where.push(`"projectId" = $${params.push(query.projectId)}`);
  if (query.since) where.push(`"fueledAt" >= $${params.push(query.since.toISOString())}::timestamptz`);
  if (query.until) where.push(`"fueledAt" < $${params.push(query.until.toISOString())}::timestamptz`);
  const { text, params: all } = keysetSql({
    from: 'fuel_entries',
    where,
    params,
    order: ORDER,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
  });
  return sql.query<FuelEntryRow>(text, all);
}

/** The asset fields that decide whether it may take a fill; null when it is not the organisation's. */
export async function fillTarget(tx: Tx, orgId: string, assetId: string) {
  return tx.asset.findFirst({
    where: { id: assetId, orgId },
    select: { id: true, lifecycleStatus: true, soldAt: true, purchaseDate: true },
  });
}

export async function findFuelEntry(tx: Tx, orgId: string, id: string) {
  return tx.fuelEntry.findFirst({ where: { id, orgId } });
}

export async function findFuelEntryByExternalId(tx: Tx, orgId: string, externalId: string) {
  return tx.fuelEntry.findFirst({ where: { orgId, externalId } });
}

/**
 * A voided fill's reading stays out of distances after the fill is deleted: its meter log, which the later
 * readings' deltas were computed from and so is kept, is marked REJECTED.
 */
export async function rejectFillReading(tx: Tx, orgId: string, logId: string, actorId: string | null) {
  await tx.meterLog.updateMany({
    where: { id: logId, orgId },
    data: {
      reviewStatus: 'REJECTED',
      reviewReason: 'the voided fuel entry of this reading was deleted',
      reviewedById: actorId,
      reviewedAt: new Date(),
    },
  });
}
