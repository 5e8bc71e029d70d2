import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { Inspection, InspectionResult } from '../../generated/prisma/client.ts';
import { enumFilter, keysetSql } from '../../core/pagination.ts';
import { INSPECTION_RESULTS, type ListInspectionsInput } from './inspections.schemas.ts';

const NEWEST_INSPECTED = [{ column: '"inspectedAt"', cast: 'timestamptz' }, { column: 'id' }];

/**
 * Newest inspectedAt first. The asset and form filters read inspections(assetId|formId, inspectedAt, id), the
 * result filter inspections(orgId, result, inspectedAt, id), none of them inspections(orgId, inspectedAt, id);
 * `since` bounds the same range.
 */
export function listInspections(
  sql: SqlRunner,
  orgId: string,
  query: ListInspectionsInput,
  after: [Date, string] | null,
): Promise<Inspection[]> {
  const where = ['"orgId" = $1'];
  const params: unknown[] = [orgId];
  if (query.assetId) where.push(`"assetId" = $${params.push(query.assetId)}`);
  if (query.inspectionFormId) where.push(`"formId" = $${params.push(query.inspectionFormId)}`);
  if (query.since) where.push(`"inspectedAt" >= $${params.push(query.since.toISOString())}::timestamptz`);
  enumFilter(where, params, 'result', 'InspectionResult', query.result, INSPECTION_RESULTS);
  const { text, params: all } = keysetSql({
    from: 'inspections',
    where,
    params,
    order: NEWEST_INSPECTED,
    direction: 'desc',
    after: after ? [after[0].toISOString(), after[1]] : null,
    take: query.limit + 1,
  });
  return sql.query<Inspection>(text, all);
}

export interface SummaryRecord {
  assetId: string;
  nickname: string;
  lifecycleStatus: 'IN_SERVICE' | 'OUT_OF_SERVICE' | 'ARCHIVED' | 'SOLD';
  lastInspectionId: string | null;
  lastInspectedAt: Date | null;
  lastResult: InspectionResult | null;
  openDefects: number;
}

/**
 * One page of the organisation's assets by id (assets(orgId, id)), each with its summary row (primary key) and
 * its open inspection flags counted on flags(assetId, status, createdAt, id): a fixed cost per asset on the page,
 * whatever the number of inspections.
 */
export function inspectionSummary(
  sql: SqlRunner,
  orgId: string,
  afterAssetId: string | null,
  take: number,
): Promise<SummaryRecord[]> {
  const params: unknown[] = [orgId];
  const after = afterAssetId ? `AND a.id > $${params.push(afterAssetId)}` : '';
  return sql.query<SummaryRecord>(
    `SELECT a.id AS "assetId", a.nickname, a."lifecycleStatus"::text AS "lifecycleStatus",
       s."lastInspectionId", s."lastInspectedAt", s."lastResult"::text AS "lastResult",
       (SELECT count(*)::int FROM flags f
         WHERE f."assetId" = a.id AND f.status IN ('OPEN', 'IN_PROGRESS') AND f."inspectionId" IS NOT NULL) AS "openDefects"
     FROM assets a LEFT JOIN asset_inspection_summaries s ON s."assetId" = a.id
     WHERE a."orgId" = $1 ${after}
     ORDER BY a.id LIMIT $${params.push(take)}`,
    params,
  );
}

/** Moves the asset's summary to this inspection unless a later-dated one is already there. */
export async function recordLatestInspection(tx: Tx, inspection: Inspection): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO asset_inspection_summaries ("assetId", "orgId", "lastInspectionId", "lastInspectedAt", "lastResult")
    VALUES (${inspection.assetId}, ${inspection.orgId}, ${inspection.id}, ${inspection.inspectedAt},
      ${inspection.result}::"InspectionResult")
    ON CONFLICT ("assetId") DO UPDATE SET "lastInspectionId" = EXCLUDED."lastInspectionId",
      "lastInspectedAt" = EXCLUDED."lastInspectedAt", "lastResult" = EXCLUDED."lastResult"
    WHERE asset_inspection_summaries."lastInspectedAt" <= EXCLUDED."lastInspectedAt"`;
}

/** The inspection of the organisation under a row lock (a review at a time), or null. */
export async function lockOwnedInspection(tx: Tx, orgId: string, id: string): Promise<Inspection | null> {
  const locked = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM inspections WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  return locked.length === 0 ? null : tx.inspection.findFirst({ where: { id, orgId } });
}

/** The flags an inspection opened or added to, with their state. */
export function inspectionFlags(tx: Tx, inspectionId: string) {
  return tx.inspectionFlag.findMany({
    where: { inspectionId },
    select: {
      itemKey: true,
      opened: true,
      flag: { select: { id: true, severity: true, status: true, note: true } },
    },
    orderBy: { flagId: 'asc' },
  });
}

/** Whether an open RED flag opened by an inspection remains on the asset (it stays out of service). */
export async function openCriticalInspectionFlag(tx: Tx, orgId: string, assetId: string): Promise<boolean> {
  const flag = await tx.flag.findFirst({
    where: {
      orgId,
      assetId,
      severity: 'RED',
      status: { in: ['OPEN', 'IN_PROGRESS'] },
      inspectionId: { not: null },
    },
    select: { id: true },
  });
  return flag !== null;
}
