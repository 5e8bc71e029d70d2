// The rows of a validated submission and its inspection.submitted event in one statement: the inspection, its
// results, its links to the flags it opened or added to, the asset's summary row and the outbox rows. One round trip
// instead of five, while the transaction holds the asset lock.
import type { Tx } from '../../db/transaction.ts';
import { afterCommit } from '../../db/transaction.ts';
import { OUTBOX_NOTIFIED, outboxCtes, outboxEvent, signalQueued } from '../../events/outbox.ts';
import type { EventData } from '../../events/catalog.ts';
import type { Answer } from './inspections.rules.ts';

export interface NewInspection {
  id: string;
  orgId: string;
  assetId: string;
  formId: string;
  formVersion: number;
  inspectedAt: Date;
  inspectorName: string | null;
  result: 'PASS' | 'FAIL';
  failedItems: string[];
  signatureName: string | null;
  signedAt: Date | null;
  logId: string | null;
  outOfServiceAt: Date | null;
  createdById: string | null;
}

const RECORD_SQL = `
  WITH ins AS (
    INSERT INTO inspections (id, "orgId", "assetId", "formId", "formVersion", "inspectedAt", "inspectorName", result,
      "failedItems", "signatureName", "signedAt", "logId", "outOfServiceAt", "createdById")
    VALUES ($1::text, $2::text, $3::text, $4::text, $5::int, $6::timestamptz, $7::text, $8::"InspectionResult",
      ARRAY(SELECT jsonb_array_elements_text($9::jsonb)), $10::text, $11::timestamptz, $12::text, $13::timestamptz, $14::text)
    RETURNING id, "orgId", "assetId", "inspectedAt", result
  ),
  res AS (
    INSERT INTO inspection_results ("inspectionId", "itemKey", pass, value, note, failed, "attachmentIds")
    SELECT ins.id, r."itemKey", r.pass, r.value, r.note, r.failed,
      ARRAY(SELECT jsonb_array_elements_text(r."attachmentIds"))
    FROM ins, jsonb_to_recordset($15::jsonb)
      AS r("itemKey" text, pass boolean, value jsonb, note text, failed boolean, "attachmentIds" jsonb)
    RETURNING 1
  ),
  links AS (
    INSERT INTO inspection_flags ("inspectionId", "flagId", "itemKey", opened)
    SELECT ins.id, l."flagId", l."itemKey", l.opened
    FROM ins, jsonb_to_recordset($16::jsonb) AS l("flagId" text, "itemKey" text, opened boolean)
    ON CONFLICT DO NOTHING
    RETURNING 1
  ),
  summary AS (
    INSERT INTO asset_inspection_summaries ("assetId", "orgId", "lastInspectionId", "lastInspectedAt", "lastResult")
    SELECT ins."assetId", ins."orgId", ins.id, ins."inspectedAt", ins.result FROM ins
    ON CONFLICT ("assetId") DO UPDATE SET "lastInspectionId" = EXCLUDED."lastInspectionId",
      "lastInspectedAt" = EXCLUDED."lastInspectedAt", "lastResult" = EXCLUDED."lastResult"
    WHERE asset_inspection_summaries."lastInspectedAt" <= EXCLUDED."lastInspectedAt"
    RETURNING 1
  ),
  ${outboxCtes({ eventId: '$17', orgId: '$2', type: "'inspection.submitted'", data: '$18::jsonb' })}
  SELECT (SELECT count(*) FROM res)::int AS results, (SELECT count(*) FROM links)::int AS links, ${OUTBOX_NOTIFIED}`;

/** Writes the submission's rows and records inspection.submitted, in the caller's transaction. */
export async function recordInspection(
  tx: Tx,
  row: NewInspection,
  answers: Answer[],
  links: { flagId: string; itemKey: string; opened: boolean }[],
  event: EventData<'inspection.submitted'>,
): Promise<void> {
  const { eventId, payload } = outboxEvent('inspection.submitted', event);
  const results = answers.map((a) => ({
    itemKey: a.item.key,
    pass: a.pass,
    value: a.value,
    note: a.note,
    failed: a.failed,
    attachmentIds: a.attachmentIds,
  }));
  const [out] = await tx.$queryRawUnsafe<{ outboxNotified: string | null }[]>(
    RECORD_SQL,
    row.id,
    row.orgId,
    row.assetId,
    row.formId,
    row.formVersion,
    row.inspectedAt,
    row.inspectorName,
    row.result,
    JSON.stringify(row.failedItems),
    row.signatureName,
    row.signedAt,
    row.logId,
    row.outOfServiceAt,
    row.createdById,
    JSON.stringify(results),
    JSON.stringify(links),
    eventId,
    JSON.stringify(payload),
  );
  if (out?.outboxNotified != null) afterCommit(tx, signalQueued);
}
