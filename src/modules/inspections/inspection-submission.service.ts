import { ensureMonths } from '../../db/partitions.ts';
import { randomUUID } from 'node:crypto';
import { transaction, type Tx } from '../../db/transaction.ts';
import type { RequestContext } from '../../core/context.ts';
import { conflict, ValidationError, type FieldErrors } from '../../core/errors.ts';
import { emit } from '../../events/outbox.ts';
import type { ServiceDeps } from '../../service-deps.ts';
import { insertFlags } from '../flags/flags.operations.ts';
import { recordReading } from '../hours/hours.operations.ts';
import { findReadyAttachments } from '../attachments/attachments.repository.ts';
import { contentUrlOf } from '../attachments/attachments.schemas.ts';
import { isImage } from '../attachments/attachment-types.rules.ts';
import {
  formWithVersion,
  lockAssetForInspection,
  type FormHead,
  type InspectedAsset,
} from './inspections.repository.ts';
import { recordInspection } from './inspection-record.operations.ts';
import {
  evaluateResults,
  flagDedupeKey,
  flagReason,
  inspectedAtProblem,
  resultField,
  CLOCK_SKEW_MS,
  formArchived,
  type Answer,
} from './inspections.rules.ts';
import type { CreateInspectionInput } from './inspections.schemas.ts';

const UNAVAILABLE = new Set(['SOLD', 'ARCHIVED']);

/** The form and the version answered; archived forms take no submissions. */
async function formVersionOf(tx: Tx, ctx: RequestContext, input: CreateInspectionInput) {
  const found = await formWithVersion(tx, ctx.orgId, input.inspectionFormId, input.version ?? null);
  if (!found) throw new ValidationError({ inspectionFormId: 'no inspection form with this id in your organisation' });
  const { form, items } = found;
  if (form.status === 'ARCHIVED') throw formArchived();
  if (!items) throw new ValidationError({ version: `this form has versions 1 to ${form.currentVersion}` });
  return { form, version: input.version ?? form.currentVersion, items };
}

function assetProblems(
  asset: InspectedAsset,
  form: FormHead,
  inspectedAt: Date,
  now: Date,
  input: CreateInspectionInput,
) {
  const errors: FieldErrors = {};
  const assetClass = asset.assetClass;
  if (form.assetClasses.length > 0 && !form.assetClasses.includes(assetClass))
    errors.assetId = `is a ${assetClass} asset; this form is for ${form.assetClasses.join(', ')}`;
  const when = inspectedAtProblem(inspectedAt, now, asset.createdAt);
  if (when) errors.inspectedAt = when;
  if (input.signature && input.signature.signedAt.getTime() > now.getTime() + CLOCK_SKEW_MS)
    errors['signature.signedAt'] = 'cannot be in the future';
  return errors;
}

/**
 * Every attachment named must be a READY attachment of the asset; errors are keyed by the item naming it. Also
 * returns the images among them, the candidates for a flag's photo.
 */
async function checkAttachments(tx: Tx, ctx: RequestContext, assetId: string, answers: Answer[]) {
  const ids = [...new Set(answers.flatMap((a) => a.attachmentIds))];
  const errors: FieldErrors = {};
  if (ids.length === 0) return { errors, images: new Set<string>() };
  const found = await findReadyAttachments(tx, ctx.orgId, 'asset', assetId, ids);
  const ready = new Set(found.map((a) => a.id));
  for (const a of answers) {
    const missing = a.attachmentIds.filter((id) => !ready.has(id));
    if (missing.length > 0)
      errors[resultField(a.item.key)] = `attachment ${missing[0]} is not a ready attachment of this asset`;
  }
  return { errors, images: new Set(found.filter((a) => isImage(a.contentType)).map((a) => a.id)) };
}

/** The meter item's reading, through the meter-log pipeline; its validation errors are the item's. */
async function recordMeter(tx: Tx, ctx: RequestContext, assetId: string, meter: Answer, at: Date, id: string) {
  try {
    const { log } = await recordReading(
      tx,
      ctx,
      {
        assetId,
        hoursReading: meter.value as number,
        loggedAt: at,
        note: meter.note,
        state: null,
        loggedByDeviceId: null,
      },
      null,
      { source: 'inspection', id },
    );
    return log.id;
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const why = Object.entries(err.fieldErrors ?? {}).map(([field, message]) =>
      field === 'hoursReading' ? `reading ${message}` : `${field} ${message}`,
    );
    throw new ValidationError({ [resultField(meter.item.key)]: why.join('; ') || err.message });
  }
}

/** One flag per failure: the open flag of the same form item gets the inspection added, else a new flag. */
async function flagFailures(
  tx: Tx,
  ctx: RequestContext,
  asset: InspectedAsset,
  form: FormHead,
  inspectionId: string,
  failures: Answer[],
  photoUrlOf: (answer: Answer) => string | null,
) {
  if (failures.length === 0) return [];
  const keys = failures.map((f) => flagDedupeKey(form.id, f.item.key));
  const open = await tx.flag.findMany({
    where: { orgId: ctx.orgId, assetId: asset.id, dedupeKey: { in: keys }, status: { in: ['OPEN', 'IN_PROGRESS'] } },
    select: { id: true, dedupeKey: true, severity: true },
  });
  const openByKey = new Map(open.map((f) => [f.dedupeKey, f.id]));
  // An item made critical since its flag was opened: the open YELLOW flag it joins becomes RED, so the asset it
  // takes out of service stays out until that defect is resolved.
  const criticalKeys = new Set(failures.filter((a) => a.item.critical).map((a) => flagDedupeKey(form.id, a.item.key)));
  const escalate = open.filter((f) => f.severity === 'YELLOW' && criticalKeys.has(f.dedupeKey!)).map((f) => f.id);
  if (escalate.length > 0)
    await tx.flag.updateMany({ where: { orgId: ctx.orgId, id: { in: escalate } }, data: { severity: 'RED' } });
  const opening = failures.filter((a) => !openByKey.has(flagDedupeKey(form.id, a.item.key)));
  const created = await insertFlags(
    tx,
    ctx,
    opening.map((answer) => ({
      asset,
      severity: answer.item.critical ? ('RED' as const) : ('YELLOW' as const),
      note: flagReason(form.name, answer),
      photoUrl: photoUrlOf(answer),
      dedupeKey: flagDedupeKey(form.id, answer.item.key),
      inspectionId,
    })),
  );
  const flagOf = new Map(opening.map((a, i) => [a.item.key, created[i].id]));
  const linked = failures.map((answer) =>
    flagOf.has(answer.item.key)
      ? { answer, flagId: flagOf.get(answer.item.key)!, opened: true }
      : { answer, flagId: openByKey.get(flagDedupeKey(form.id, answer.item.key))!, opened: false },
  );
  return linked;
}

export function createInspectionSubmission({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  return {
    /** One transaction: validation, reading, flags, inspection and results, out of service, summary, events. */
    async submit(ctx: RequestContext, input: CreateInspectionInput) {
      // The meter item's reading is a meter log of the inspection's month: its partition first.
      await ensureMonths(db, 'meter_logs', [input.inspectedAt ?? new Date()]);
      return transaction(db, async (tx) => {
        // The asset lock first: submissions for one asset queue, so "adds to the open flag" is race-free.
        const asset = await lockAssetForInspection(tx, ctx.orgId, input.assetId);
        if (!asset) throw new ValidationError({ assetId: 'no asset with this id in your organisation' });
        const { form, version, items } = await formVersionOf(tx, ctx, input);
        if (UNAVAILABLE.has(asset.lifecycleStatus))
          throw conflict('asset_unavailable', `The asset is ${asset.lifecycleStatus} and takes no inspections`);
        const now = new Date();
        const inspectedAt = input.inspectedAt ?? now;
        const evaluation = evaluateResults(items, input.results, version);
        const attachments = await checkAttachments(tx, ctx, asset.id, evaluation.answers);
        const errors = {
          ...assetProblems(asset, form, inspectedAt, now, input),
          ...evaluation.errors,
          ...attachments.errors,
        };
        if (Object.keys(errors).length > 0)
          throw new ValidationError(errors, 'The inspection is not valid; see fieldErrors.');

        const id = randomUUID();
        const logId = evaluation.meter ? await recordMeter(tx, ctx, asset.id, evaluation.meter, inspectedAt, id) : null;
        // A new flag shows the first photo of its failed item, as a flag raised with photoAttachmentId does.
        const photoUrlOf = (answer: Answer) => {
          const photo = answer.attachmentIds.find((a) => attachments.images.has(a));
          return photo ? contentUrlOf(config.publicBaseUrl, photo) : null;
        };
        const linked = await flagFailures(tx, ctx, asset, form, id, evaluation.failures, photoUrlOf);
        const critical = evaluation.failures.some((f) => f.item.critical);
        const takesOut = critical && form.outOfServiceOnCriticalFailure && asset.lifecycleStatus === 'IN_SERVICE';
        const result = evaluation.failures.length > 0 ? ('FAIL' as const) : ('PASS' as const);
        const failedItems = evaluation.failures.map((f) => f.item.key);
        if (takesOut) await takeOutOfService(tx, ctx, asset, form, id, evaluation.failures);
        const flagIds = [...new Set(linked.map((l) => l.flagId))];
        const inspectorName = input.inspectorName ?? null;
        await recordInspection(
          tx,
          {
            id,
            orgId: ctx.orgId,
            assetId: asset.id,
            formId: form.id,
            formVersion: version,
            inspectedAt,
            inspectorName,
            result,
            failedItems,
            signatureName: input.signature?.name ?? null,
            signedAt: input.signature?.signedAt ?? null,
            logId,
            outOfServiceAt: takesOut ? now : null,
            createdById: ctx.actorId,
          },
          evaluation.answers,
          linked.map((l) => ({ flagId: l.flagId, itemKey: l.answer.item.key, opened: l.opened })),
          {
            inspectionId: id,
            assetId: asset.id,
            inspectionFormId: form.id,
            version,
            result,
            failedItems,
            defects: linked.map((l) => ({
              itemKey: l.answer.item.key,
              label: l.answer.item.label,
              critical: l.answer.item.critical,
              flagId: l.flagId,
              newFlag: l.opened,
            })),
            flagIds,
            logId,
            outOfService: takesOut,
            inspectorName,
            inspectedAt: inspectedAt.toISOString(),
            actorId: ctx.actorId,
          },
        );
        return { ok: true as const, inspectionId: id, result, flagIds, logId, outOfService: takesOut };
      });
    },
  };
}

/** IN_SERVICE to OUT_OF_SERVICE, with the reason in asset.updated; the inspection records that it did it. */
async function takeOutOfService(
  tx: Tx,
  ctx: RequestContext,
  asset: InspectedAsset,
  form: FormHead,
  inspectionId: string,
  failures: Answer[],
) {
  const after = await tx.asset.update({ where: { id: asset.id }, data: { lifecycleStatus: 'OUT_OF_SERVICE' } });
  const items = failures.filter((f) => f.item.critical).map((f) => f.item.label);
  await emit(tx, ctx.orgId, 'asset.updated', {
    assetId: after.id,
    nickname: after.nickname,
    changedFields: ['lifecycleStatus'],
    lifecycleStatus: after.lifecycleStatus,
    actorId: ctx.actorId,
    updatedAt: after.updatedAt.toISOString(),
    reason: `Critical failure on inspection "${form.name}": ${items.join(', ')}`,
    inspectionId,
  });
}
