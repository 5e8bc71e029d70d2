import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: meter readings, in order. */
export const HOURS_STEPS: Step[] = [
  // Meter readings.
  {
    operationId: 'createHoursLog',
    headers: { 'Idempotency-Key': 'reading-{{$timestamp}}' },
    body: { assetId: '{{assetId}}', hoursReading: 120, projectId: '{{projectId}}' },
    status: 201,
    save: { logId: 'logId' },
    checks: [okTrue, str('logId')],
  },
  {
    operationId: 'createHoursLog',
    name: 'Log a lower reading (held for review)',
    body: { assetId: '{{assetId}}', hoursReading: 100, note: 'Meter replaced by the dealer' },
    status: 201,
    save: { pendingLogId: 'logId' },
    checks: [okTrue, is('reviewStatus', 'PENDING')],
  },
  {
    operationId: 'reviewHoursLog',
    params: { id: '{{pendingLogId}}' },
    body: { reviewStatus: 'APPROVED' },
    status: 200,
    checks: [okTrue, is('reviewStatus', 'APPROVED')],
  },
  {
    operationId: 'listHours',
    query: { assetId: '{{assetId}}', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'hoursLogs', type: 'array' }],
  },
  {
    operationId: 'getHoursLog',
    params: { id: '{{logId}}' },
    status: 200,
    checks: [okTrue, is('hoursLog.id', '{{logId}}')],
  },
  {
    operationId: 'createHoursBatch',
    body: [
      { assetId: '{{assetId}}', hoursReading: 130, clientMutationId: 'batch-{{$timestamp}}' },
      { hoursReading: -1 },
    ],
    status: 200,
    checks: [okTrue, is('results.0.ok', true), str('results.0.logId'), is('results.1.ok', false)],
  },
  {
    operationId: 'getProjectEquipmentUsage',
    params: { id: '{{projectId}}' },
    status: 200,
    checks: [okTrue, is('usage.projectId', '{{projectId}}')],
  },
];
