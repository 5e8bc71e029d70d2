import { transaction } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, notFound } from '../../core/errors.ts';
import { emit } from '../../events/outbox.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { lockOwnedAsset } from '../assets/assets.repository.ts';
import { inspectionFlags, lockOwnedInspection } from './inspections.repository.ts';
import { releaseIfCleared } from './inspection-release.operations.ts';
import type { ReviewInspectionInput } from './inspections.schemas.ts';

const OPEN = new Set(['OPEN', 'IN_PROGRESS']);

export function createInspectionReview({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /**
     * The mechanic's certification, once per inspection. defects_corrected needs every flag of the inspection
     * resolved; no_correction_needed leaves its flags as they are. An inspection that took the asset out of
     * service puts it back when no critical inspection defect stays open on it, now or when the last one is resolved.
     */
    async review(ctx: RequestContext, id: string, input: ReviewInspectionInput) {
      const found = await db.prisma.inspection.findFirst({
        where: { id, orgId: ctx.orgId },
        select: { assetId: true },
      });
      if (!found) throw notFound('Inspection');
      return transaction(db, async (tx) => {
        // Asset then inspection: the order submissions take the asset lock in, so the two never deadlock.
        const asset = await lockOwnedAsset(tx, ctx.orgId, found.assetId);
        const inspection = await lockOwnedInspection(tx, ctx.orgId, id);
        if (!asset || !inspection) throw notFound('Inspection');
        if (inspection.reviewOutcome)
          throw conflict('inspection_already_reviewed', 'This inspection was already reviewed; a review is final');
        const flags = await inspectionFlags(tx, id);
        const open = flags.filter((l) => OPEN.has(l.flag.status)).map((l) => l.flag.id);
        if (input.outcome === 'defects_corrected' && open.length > 0)
          throw conflict(
            'inspection_defects_open',
            'Resolve the flags this inspection opened or added to before certifying the defects corrected',
            { openFlagIds: open },
          );
        const now = new Date();
        const reviewedBy = input.reviewedBy ?? null;
        await tx.inspection.update({
          where: { id },
          data: {
            reviewOutcome: input.outcome,
            reviewNote: input.note ?? null,
            reviewedBy,
            reviewedById: ctx.actorId,
            reviewedAt: now,
          },
        });
        const returnedToService = await releaseIfCleared(
          tx,
          ctx,
          asset,
          `Inspection reviewed (${input.outcome}) with its critical defects resolved`,
          id,
        );
        await emit(tx, ctx.orgId, 'inspection.reviewed', {
          inspectionId: id,
          assetId: asset.id,
          inspectionFormId: inspection.formId,
          outcome: input.outcome,
          note: input.note ?? null,
          reviewedBy,
          returnedToService,
          actorId: ctx.actorId,
          reviewedAt: now.toISOString(),
        });
        return {
          ok: true as const,
          inspectionId: id,
          review: {
            outcome: input.outcome,
            note: input.note ?? null,
            reviewedBy,
            reviewedById: ctx.actorId,
            reviewedAt: now.toISOString(),
          },
          returnedToService,
        };
      });
    },
  };
}
