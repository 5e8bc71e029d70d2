import { z } from 'zod';

/** Inspections: a submission (with the flags it opened or added to) and the mechanic's review of it. */
const id = z.string();
const nullableId = z.string().nullable();
const at = z.iso.datetime({ offset: true });

export const inspectionEvents = {
  'inspection.submitted': {
    summary:
      'An inspection is submitted; a FAIL names its failed items and their flags (each new flag also sends flag.created).',
    data: z.object({
      inspectionId: id,
      assetId: id,
      inspectionFormId: id,
      version: z.number().int(),
      result: z.enum(['PASS', 'FAIL']),
      failedItems: z.array(z.string()).describe('Keys of the failed items'),
      defects: z.array(
        z.object({ itemKey: z.string(), label: z.string(), critical: z.boolean(), flagId: id, newFlag: z.boolean() }),
      ),
      flagIds: z.array(id),
      logId: nullableId,
      outOfService: z.boolean().describe('The submission took the asset out of service'),
      inspectorName: z.string().nullable(),
      inspectedAt: at,
      actorId: nullableId,
    }),
  },
  'inspection.reviewed': {
    summary:
      'A mechanic reviews an inspection (defects corrected, or no correction needed); may return the asset to service.',
    data: z.object({
      inspectionId: id,
      assetId: id,
      inspectionFormId: id,
      outcome: z.enum(['defects_corrected', 'no_correction_needed']),
      note: z.string().nullable(),
      reviewedBy: z.string().nullable(),
      returnedToService: z.boolean(),
      actorId: nullableId,
      reviewedAt: at,
    }),
  },
} as const;

const AT = '2026-11-22T14:05:00.000Z';

export const INSPECTION_EVENT_EXAMPLES: {
  [T in keyof typeof inspectionEvents]: z.input<(typeof inspectionEvents)[T]['data']>;
} = {
  'inspection.submitted': {
    inspectionId: 'insp_01',
    assetId: 'ast_01',
    inspectionFormId: 'form_01',
    version: 2,
    result: 'FAIL',
    failedItems: ['service_brakes'],
    defects: [{ itemKey: 'service_brakes', label: 'Service brakes', critical: true, flagId: 'flg_01', newFlag: true }],
    flagIds: ['flg_01'],
    logId: 'log_01',
    outOfService: true,
    inspectorName: 'Dana Driver',
    inspectedAt: AT,
    actorId: 'usr_7f3c2a',
  },
  'inspection.reviewed': {
    inspectionId: 'insp_01',
    assetId: 'ast_01',
    inspectionFormId: 'form_01',
    outcome: 'defects_corrected',
    note: 'Brake chamber replaced on axle 2',
    reviewedBy: 'Mo Mechanic',
    returnedToService: true,
    actorId: 'usr_7f3c2a',
    reviewedAt: AT,
  },
};
