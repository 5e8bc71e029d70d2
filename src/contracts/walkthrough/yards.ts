import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: yards, in order. */
export const YARD_STEPS: Step[] = [
  // Yards: where things live.
  {
    operationId: 'createYard',
    body: { name: 'North Yard {{$timestamp}}', lat: 29.76, lng: -95.37 },
    status: 201,
    save: { yardId: 'yardId' },
    checks: [okTrue, str('yardId')],
  },
  {
    operationId: 'createYard',
    name: 'Create a second yard (deleted at the end), safe to retry with an Idempotency-Key',
    headers: { 'Idempotency-Key': 'overflow-yard-{{$timestamp}}' },
    body: { name: 'Overflow Yard {{$timestamp}}' },
    status: 201,
    save: { spareYardId: 'yardId' },
    checks: [okTrue, str('yardId')],
  },
  { operationId: 'listYards', query: { limit: '10' }, status: 200, checks: [okTrue, { path: 'yards', type: 'array' }] },
  { operationId: 'getYard', params: { id: '{{yardId}}' }, status: 200, checks: [okTrue, is('yard.id', '{{yardId}}')] },
  {
    operationId: 'updateYard',
    params: { id: '{{yardId}}' },
    body: { notes: 'Gate code at the office' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createYardsBatch',
    body: { entries: [{ name: 'South Yard {{$timestamp}}' }, { lat: 12 }] },
    status: 200,
    checks: [
      okTrue,
      is('results.0.ok', true),
      str('results.0.yardId'),
      is('results.1.ok', false),
      is('results.1.error', 'validation_failed'),
      is('summary.failed', 1),
    ],
  },
];
