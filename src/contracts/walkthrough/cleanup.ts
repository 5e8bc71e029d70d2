import { okTrue, is, type Step } from './step.ts';

/** Walkthrough steps: deletions of what the earlier steps created, in order. */
export const CLEANUP_STEPS: Step[] = [
  // Clean up what can be deleted.
  { operationId: 'deleteWebhook', params: { id: '{{webhookId}}' }, status: 200, checks: [okTrue] },
  {
    operationId: 'deleteYard',
    params: { id: '{{spareYardId}}' },
    status: 200,
    checks: [okTrue, is('yardId', '{{spareYardId}}')],
  },
];
