import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: organisation settings, parts, stock and work-order costs, in order. */
export const PART_STEPS: Step[] = [
  { operationId: 'getOrganization', status: 200, checks: [okTrue, str('organization.currency')] },
  {
    operationId: 'updateOrganization',
    body: { currency: 'USD', inventoryCostMethod: 'FIFO' },
    status: 200,
    checks: [okTrue, is('organization.currency', 'USD'), is('organization.inventoryCostMethod', 'FIFO')],
  },
];
