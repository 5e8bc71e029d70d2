import type { RequestContext } from '../../core/context.ts';
import { notFound, ValidationError } from '../../core/errors.ts';
import { decodeCursor, paginate, timeIdCursor } from '../../core/pagination.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { findReadyAttachments } from '../attachments/attachments.repository.ts';
import { contentUrlOf } from '../attachments/attachments.schemas.ts';
import type { InspectionItem } from './inspection-forms.schemas.ts';
import { createInspectionReview } from './inspection-review.service.ts';
import { createInspectionSubmission } from './inspection-submission.service.ts';
import { inspectionFlags, inspectionSummary, listInspections } from './inspections.repository.ts';
import { toInspectionRow, type InspectionSummaryInput, type ListInspectionsInput } from './inspections.schemas.ts';

const DAY_MS = 24 * 3600 * 1000;

function assetCursor(values: (string | number | null)[] | null): string | null {
  if (!values) return null;
  if (typeof values[0] !== 'string') throw new ValidationError({ cursor: 'is not a cursor returned by this endpoint' });
  return values[0];
}

export function createInspectionService(deps: Pick<ServiceDeps, 'db' | 'config'>) {
  const { db, config } = deps;
  return {
    ...createInspectionSubmission(deps),
    ...createInspectionReview(deps),

    async list(ctx: RequestContext, query: ListInspectionsInput) {
      const rows = await listInspections(db.sql, ctx.orgId, query, timeIdCursor(decodeCursor(query.cursor, 2)));
      const { page, nextCursor } = paginate(rows, query.limit, (i) => [i.inspectedAt.toISOString(), i.id]);
      return { ok: true as const, inspections: page.map(toInspectionRow), nextCursor };
    },

    /** The inspection with the items of the version it answered, its results, flags and attachments. */
    async get(ctx: RequestContext, id: string) {
      const inspection = await db.prisma.inspection.findFirst({
        where: { id, orgId: ctx.orgId },
        include: {
          results: true,
          formVersionRef: { select: { items: true, form: { select: { name: true } } } },
        },
      });
      if (!inspection) throw notFound('Inspection');
      const items = inspection.formVersionRef.items as unknown as InspectionItem[];
      const order = new Map(items.map((item, i) => [item.key, i]));
      const results = [...inspection.results].sort((a, b) => order.get(a.itemKey)! - order.get(b.itemKey)!);
      const attachmentsOf = new Map(results.map((r) => [r.itemKey, r.attachmentIds]));
      const [links, attachments] = await Promise.all([
        inspectionFlags(db.prisma, id),
        findReadyAttachments(
          db.prisma,
          ctx.orgId,
          'asset',
          inspection.assetId,
          results.flatMap((r) => r.attachmentIds),
        ),
      ]);
      const itemOfAttachment = new Map(results.flatMap((r) => r.attachmentIds.map((a) => [a, r.itemKey] as const)));
      return {
        ok: true as const,
        inspection: {
          ...toInspectionRow(inspection),
          formName: inspection.formVersionRef.form.name,
          items,
          results: results.map((r) => ({
            itemKey: r.itemKey,
            pass: r.pass,
            value: (r.value ?? null) as number | string | null,
            note: r.note,
            failed: r.failed,
            attachmentIds: r.attachmentIds,
          })),
          flags: links.map((l) => ({
            ...l.flag,
            itemKey: l.itemKey,
            opened: l.opened,
            attachmentIds: attachmentsOf.get(l.itemKey) ?? [],
          })),
          attachments: attachments.map((a) => ({
            id: a.id,
            itemKey: itemOfAttachment.get(a.id)!,
            filename: a.filename,
            contentType: a.contentType,
            size: a.size,
            contentUrl: contentUrlOf(config.publicBaseUrl, a.id),
          })),
        },
      };
    },

    async summary(ctx: RequestContext, query: InspectionSummaryInput) {
      const since = query.since ?? new Date(Date.now() - DAY_MS);
      const rows = await inspectionSummary(
        db.sql,
        ctx.orgId,
        assetCursor(decodeCursor(query.cursor, 1)),
        query.limit + 1,
      );
      const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.assetId]);
      return {
        ok: true as const,
        since: since.toISOString(),
        assets: page.map((r) => {
          const last = r.lastInspectedAt === null ? null : new Date(r.lastInspectedAt);
          return {
            assetId: r.assetId,
            nickname: r.nickname,
            lifecycleStatus: r.lifecycleStatus,
            lastInspectionId: r.lastInspectionId,
            lastInspectedAt: last ? last.toISOString() : null,
            lastResult: r.lastResult,
            openDefects: r.openDefects,
            notInspected: last === null || last.getTime() < since.getTime(),
          };
        }),
        nextCursor,
      };
    },
  };
}

export type InspectionService = ReturnType<typeof createInspectionService>;
