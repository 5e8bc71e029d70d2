import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: flags, work orders and repairs, in order. */
export const FLAG_AND_WORK_ORDER_STEPS: Step[] = [
  // Flags, work orders and repairs.
  {
    operationId: 'createFlag',
    body: { assetId: '{{assetId}}', severity: 'YELLOW', note: 'Slow hydraulic leak at the boom' },
    status: 201,
    save: { flagId: 'flagId' },
    checks: [okTrue, str('flagId')],
  },
  {
    operationId: 'listFlags',
    query: { status: 'OPEN', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'flags', type: 'array' }],
  },
  { operationId: 'getFlag', params: { id: '{{flagId}}' }, status: 200, checks: [okTrue, is('flag.id', '{{flagId}}')] },
  {
    operationId: 'createWorkOrder',
    body: { title: 'Replace boom hose', assetId: '{{assetId}}', flagId: '{{flagId}}', priority: 'HIGH' },
    status: 201,
    save: { workOrderId: 'workOrderId' },
    checks: [okTrue, str('workOrderId'), { path: 'number', type: 'number' }],
  },
  {
    operationId: 'listWorkOrders',
    query: { priority: 'HIGH', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'workOrders', type: 'array' }],
  },
  {
    operationId: 'getWorkOrder',
    params: { id: '{{workOrderId}}' },
    status: 200,
    checks: [okTrue, is('workOrder.id', '{{workOrderId}}')],
  },
  {
    operationId: 'updateWorkOrder',
    params: { id: '{{workOrderId}}' },
    body: { status: 'IN_PROGRESS' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createRepair',
    body: { workOrderId: '{{workOrderId}}', laborHours: 2.5, cost: 180, parts: 'Hose 3/8in x 48in' },
    status: 201,
    save: { repairId: 'repairId' },
    checks: [okTrue, str('repairId')],
  },
  {
    operationId: 'listRepairs',
    query: { workOrderId: '{{workOrderId}}' },
    status: 200,
    checks: [okTrue, { path: 'repairs', type: 'array' }],
  },
  {
    operationId: 'getRepair',
    params: { id: '{{repairId}}' },
    status: 200,
    checks: [okTrue, is('repair.id', '{{repairId}}')],
  },
];
