import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: inspection forms, templates, a submission with a failed item, its review, the fleet view. */
export const INSPECTION_STEPS: Step[] = [
  {
    operationId: 'listInspectionFormTemplates',
    status: 200,
    checks: [okTrue, { path: 'templates', type: 'array' }, is('templates.0.id', 'dvir-pre-trip')],
  },
  {
    operationId: 'createInspectionForm',
    name: 'Copy the daily walk-around template into the organisation',
    body: { template: 'daily-walk-around' },
    status: 201,
    save: { inspectionFormId: 'inspectionFormId' },
    checks: [okTrue, str('inspectionFormId'), is('version', 1)],
  },
  {
    operationId: 'createInspectionForm',
    name: 'Create a form of its own',
    body: {
      name: 'Yard exit check {{$timestamp}}',
      items: [
        { key: 'beacon', label: 'Beacon works', type: 'pass_fail', critical: true },
        { key: 'tyre_psi', label: 'Tyre pressure (psi)', type: 'number', min: 30, max: 40, required: false },
      ],
    },
    status: 201,
    save: { spareInspectionFormId: 'inspectionFormId' },
    checks: [okTrue, str('inspectionFormId')],
  },
  {
    operationId: 'listInspectionForms',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'inspectionForms', type: 'array' }],
  },
  {
    operationId: 'getInspectionForm',
    params: { id: '{{inspectionFormId}}' },
    status: 200,
    checks: [okTrue, is('inspectionForm.id', '{{inspectionFormId}}'), { path: 'inspectionForm.items', type: 'array' }],
  },
  {
    operationId: 'updateInspectionForm',
    params: { id: '{{inspectionFormId}}' },
    body: { description: 'Before the first shift, every day' },
    status: 200,
    checks: [okTrue, is('version', 1)],
  },
  {
    operationId: 'createInspection',
    name: 'Submit a walk-around with a failed item (opens a YELLOW flag)',
    headers: { 'Idempotency-Key': 'walk-around-{{$timestamp}}' },
    body: {
      inspectionFormId: '{{inspectionFormId}}',
      assetId: '{{assetId}}',
      inspectorName: 'Olive Operator',
      results: [
        { itemKey: 'fluid_levels', pass: true },
        { itemKey: 'leaks', pass: true },
        { itemKey: 'tracks_tires', pass: true },
        { itemKey: 'attachments', pass: true },
        { itemKey: 'hydraulics', pass: true },
        { itemKey: 'lights', pass: false, note: 'Left work light out' },
        { itemKey: 'rops_seat_belt', pass: true },
        { itemKey: 'fire_extinguisher', pass: true },
      ],
    },
    status: 201,
    save: { inspectionId: 'inspectionId' },
    checks: [okTrue, str('inspectionId'), is('result', 'FAIL'), { path: 'flagIds', type: 'array' }],
  },
  {
    operationId: 'listInspections',
    query: { assetId: '{{assetId}}', limit: '10' },
    status: 200,
    checks: [okTrue, is('inspections.0.id', '{{inspectionId}}')],
  },
  {
    operationId: 'getInspection',
    params: { id: '{{inspectionId}}' },
    status: 200,
    checks: [okTrue, is('inspection.id', '{{inspectionId}}'), is('inspection.flags.0.itemKey', 'lights')],
  },
  {
    operationId: 'reviewInspection',
    params: { id: '{{inspectionId}}' },
    body: { outcome: 'no_correction_needed', note: 'Work light not needed for day shifts', reviewedBy: 'Mo Mechanic' },
    status: 200,
    checks: [okTrue, is('review.outcome', 'no_correction_needed')],
  },
  {
    operationId: 'getInspectionSummary',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'assets', type: 'array' }],
  },
  {
    operationId: 'archiveInspectionForm',
    params: { id: '{{spareInspectionFormId}}' },
    status: 200,
    checks: [okTrue, is('status', 'ARCHIVED')],
  },
];
