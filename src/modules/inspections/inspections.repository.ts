import type { SqlRunner } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { Inspection, InspectionResult } from '../../generated/prisma/client.ts';
import type { InspectionItem } from './inspection-forms.schemas.ts';
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

export interface InspectedAsset {
  id: string;
  nickname: string;
  assetClass: 'on-road' | 'off-road' | 'trailer';
  lifecycleStatus: 'IN_SERVICE' | 'OUT_OF_SERVICE' | 'ARCHIVED' | 'SOLD';
  createdAt: Date;
}

/** What a submission needs of the asset, read under the asset row lock (one statement). */
export async function lockAssetForInspection(tx: Tx, orgId: string, id: string): Promise<InspectedAsset | null> {
  const rows = await tx.$queryRaw<InspectedAsset[]>`
    SELECT id, nickname, "assetClass"::text AS "assetClass", "lifecycleStatus"::text AS "lifecycleStatus", "createdAt"
    FROM assets WHERE id = ${id} AND "orgId" = ${orgId} FOR UPDATE`;
  return rows[0] ?? null;
}

export interface FormHead {
  id: string;
  name: string;
  status: 'ACTIVE' | 'ARCHIVED';
  currentVersion: number;
  assetClasses: string[];
  outOfServiceOnCriticalFailure: boolean;
}

/**
 * The form and the items of a version of it (default the current one; items null when there is no such version),
 * share-locked: an archive or an items PATCH (which lock it for update) waits for the submissions reading it.
 */
export async function formWithVersion(
  tx: Tx,
  orgId: string,
  formId: string,
  version: number | null,
): Promise<{ form: FormHead; items: InspectionItem[] | null } | null> {
  const rows = await tx.$queryRaw<(FormHead & { items: InspectionItem[] | null })[]>`
    SELECT f.id, f.name, f.status::text AS status, f."currentVersion", f."assetClasses",
      f."outOfServiceOnCriticalFailure", v.items
    FROM inspection_forms f
    LEFT JOIN inspection_form_versions v ON v."formId" = f.id AND v.version = COALESCE(${version}::int, f."currentVersion")
    WHERE f.id = ${formId} AND f."orgId" = ${orgId}
    FOR SHARE OF f`;
  if (rows.length === 0) return null;
  const { items, ...form } = rows[0];
  return { form, items: typeof items === 'string' ? (JSON.parse(items) as InspectionItem[]) : items };
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
