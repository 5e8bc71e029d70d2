/* eslint-disable max-lines -- the walkthrough is data, one step per operation in the order an integrator meets them */
/**
 * An integrator's first session, as data: every operation of the API in a sensible order, each with the
 * request to send (`{{var}}` placeholders for ids captured earlier, `{{$timestamp}}` for unique names), the
 * status to expect, the ids to capture and the fields to check. Two consumers: the Postman collection (each
 * step becomes a request with test scripts; `newman run` in CI) and the conformance test (each step is sent
 * and its response validated against openapi.yaml). The contract generator fails when an operation has no step.
 */
export interface Check {
  /** Dotted path into the JSON body, e.g. `results.1.ok`. */
  path: string;
  equals?: string | number | boolean | null;
  type?: 'string' | 'number' | 'boolean' | 'array' | 'object';
}

export interface Step {
  operationId: string;
  name?: string;
  /** Path parameters (values may be `{{var}}`). */
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  status: number;
  /** Expected media type of the answer when it is not JSON. */
  contentType?: string;
  /** Collection variable name to JSON path of the value to keep. */
  save?: Record<string, string>;
  checks?: Check[];
}

const okTrue: Check = { path: 'ok', equals: true };
const str = (path: string): Check => ({ path, type: 'string' });
const is = (path: string, equals: Check['equals']): Check => ({ path, equals });

export const WALKTHROUGH: Step[] = [
  // Public: no key needed.
  { operationId: 'getHealth', status: 200, checks: [okTrue, is('database', 'ok'), is('apiVersion', 'v1')] },
  { operationId: 'getLiveness', status: 200, checks: [okTrue] },
  { operationId: 'getVersion', status: 200, checks: [okTrue, is('apiVersion', 'v1')] },
  { operationId: 'getChangelog', status: 200, checks: [{ path: 'entries', type: 'array' }] },
  // Who am I, and how much of my rate limit is left.
  {
    operationId: 'getMe',
    status: 200,
    checks: [okTrue, str('organization.id'), { path: 'apiKey.scopes', type: 'array' }],
  },
  { operationId: 'getMyUsage', status: 200, checks: [okTrue, { path: 'rateLimit.limit', type: 'number' }] },
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
  // Projects: what work is billed to.
  {
    operationId: 'createProject',
    body: { name: 'Bridge retrofit', code: 'JOB-{{$timestamp}}', hourlyRate: 95 },
    status: 201,
    save: { projectId: 'projectId' },
    checks: [okTrue, str('projectId')],
  },
  {
    operationId: 'listProjects',
    query: { status: 'ACTIVE', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'projects', type: 'array' }],
  },
  {
    operationId: 'getProject',
    params: { id: '{{projectId}}' },
    status: 200,
    checks: [okTrue, is('project.id', '{{projectId}}')],
  },
  {
    operationId: 'updateProject',
    params: { id: '{{projectId}}' },
    body: { customerName: 'City of Houston' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createProjectsBatch',
    body: [{ name: 'Culvert repair' }, { code: 'no name' }],
    status: 200,
    checks: [okTrue, is('results.0.ok', true), str('results.0.projectId'), is('results.1.ok', false)],
  },
  // Assets.
  {
    operationId: 'createAsset',
    body: { nickname: 'Excavator 7', assetClass: 'off-road', serial: 'SN-{{$timestamp}}' },
    status: 201,
    save: { assetId: 'assetId' },
    checks: [okTrue, str('assetId')],
  },
  {
    operationId: 'listAssets',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'assets', type: 'array' }],
  },
  {
    operationId: 'getAsset',
    params: { id: '{{assetId}}' },
    status: 200,
    checks: [okTrue, is('asset.id', '{{assetId}}'), is('asset.meterType', 'HOURS')],
  },
  {
    operationId: 'updateAsset',
    params: { id: '{{assetId}}' },
    body: { yardId: '{{yardId}}', pmInterval: 250 },
    status: 200,
    checks: [okTrue, is('assetId', '{{assetId}}')],
  },
  {
    operationId: 'createAssetsBatch',
    body: { entries: [{ nickname: 'Trailer 3', assetClass: 'trailer' }, { nickname: 'No class' }] },
    status: 200,
    checks: [
      okTrue,
      is('results.0.ok', true),
      str('results.0.assetId'),
      is('results.1.ok', false),
      { path: 'results.1.fieldErrors', type: 'object' },
    ],
  },
  {
    operationId: 'checkoutAsset',
    params: { id: '{{assetId}}' },
    body: { toProjectId: '{{projectId}}', note: 'Bridge job' },
    status: 200,
    checks: [okTrue, is('changed', true)],
  },
  {
    operationId: 'checkinAsset',
    params: { id: '{{assetId}}' },
    body: { note: 'Back at the yard' },
    status: 200,
    checks: [okTrue, is('changed', true)],
  },
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
  // Preventive maintenance: a catalogue of services, reminders by meter and calendar, programs.
  {
    operationId: 'createServiceTask',
    body: { name: 'Engine oil and filter {{$timestamp}}', description: '15W-40, 38 l' },
    status: 201,
    save: { serviceTaskId: 'serviceTaskId' },
    checks: [okTrue, str('serviceTaskId')],
  },
  {
    operationId: 'listServiceTasks',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'serviceTasks', type: 'array' }],
  },
  {
    operationId: 'getServiceTask',
    params: { id: '{{serviceTaskId}}' },
    status: 200,
    checks: [okTrue, is('serviceTask.id', '{{serviceTaskId}}')],
  },
  {
    operationId: 'updateServiceTask',
    params: { id: '{{serviceTaskId}}' },
    body: { description: '15W-40, 38 l, and the filter' },
    status: 200,
    checks: [okTrue, is('serviceTaskId', '{{serviceTaskId}}')],
  },
  {
    operationId: 'createServiceReminder',
    body: {
      assetId: '{{assetId}}',
      serviceTaskId: '{{serviceTaskId}}',
      meterInterval: 250,
      dueSoonMeter: 25,
      dayInterval: 180,
      dueSoonDays: 14,
    },
    status: 201,
    save: { serviceReminderId: 'serviceReminderId' },
    checks: [okTrue, str('serviceReminderId'), str('status')],
  },
  {
    operationId: 'listServiceReminders',
    query: { status: 'OVERDUE,DUE_SOON', limit: '20' },
    status: 200,
    checks: [okTrue, { path: 'serviceReminders', type: 'array' }],
  },
  {
    operationId: 'getServiceReminder',
    params: { id: '{{serviceReminderId}}' },
    status: 200,
    checks: [okTrue, is('serviceReminder.serviceReminderId', '{{serviceReminderId}}')],
  },
  {
    operationId: 'updateServiceReminder',
    params: { id: '{{serviceReminderId}}' },
    body: { dueSoonDays: 21 },
    status: 200,
    checks: [okTrue, str('status')],
  },
  {
    operationId: 'snoozeServiceReminder',
    params: { id: '{{serviceReminderId}}' },
    body: { until: '2099-01-01T00:00:00Z' },
    status: 200,
    checks: [okTrue, is('status', 'SNOOZED')],
  },
  {
    operationId: 'completeServiceReminder',
    params: { id: '{{serviceReminderId}}' },
    body: { note: 'Oil and filter changed', workOrderId: '{{workOrderId}}' },
    status: 201,
    checks: [okTrue, str('completionId'), is('cycle', 2)],
  },
  {
    operationId: 'listServiceReminderHistory',
    params: { id: '{{serviceReminderId}}' },
    status: 200,
    checks: [okTrue, { path: 'history', type: 'array' }, is('history.0.note', 'Oil and filter changed')],
  },
  {
    operationId: 'createServiceProgram',
    body: {
      name: 'Loader A-service {{$timestamp}}',
      items: [{ serviceTaskId: '{{serviceTaskId}}', meterInterval: 500, dayInterval: 365, dueSoonDays: 30 }],
    },
    status: 201,
    save: { serviceProgramId: 'serviceProgramId' },
    checks: [okTrue, str('serviceProgramId')],
  },
  {
    operationId: 'listServicePrograms',
    status: 200,
    checks: [okTrue, { path: 'servicePrograms', type: 'array' }],
  },
  {
    operationId: 'getServiceProgram',
    params: { id: '{{serviceProgramId}}' },
    status: 200,
    checks: [okTrue, is('serviceProgram.id', '{{serviceProgramId}}'), { path: 'serviceProgram.items', type: 'array' }],
  },
  {
    operationId: 'updateServiceProgram',
    params: { id: '{{serviceProgramId}}' },
    body: { description: 'Every 500 h or yearly' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'applyServiceProgram',
    params: { id: '{{serviceProgramId}}' },
    body: { assetIds: ['{{assetId}}', 'no-such-asset'] },
    status: 200,
    checks: [okTrue, is('summary.applied', 1), is('summary.notFound', 1)],
  },
  {
    operationId: 'removeServiceProgramAsset',
    params: { id: '{{serviceProgramId}}', assetId: '{{assetId}}' },
    status: 200,
    checks: [okTrue, is('remindersDeleted', 1)],
  },
  {
    operationId: 'deleteServiceReminder',
    params: { id: '{{serviceReminderId}}' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createServiceTask',
    name: 'Add a service task to delete',
    body: { name: 'Retired task {{$timestamp}}' },
    status: 201,
    save: { spareServiceTaskId: 'serviceTaskId' },
    checks: [okTrue],
  },
  {
    operationId: 'deleteServiceTask',
    params: { id: '{{spareServiceTaskId}}' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createFlag',
    name: 'Raise a second flag',
    body: { assetId: '{{assetId}}', severity: 'YELLOW', note: 'Cracked mirror' },
    status: 201,
    save: { mirrorFlagId: 'flagId' },
    checks: [okTrue],
  },
  {
    operationId: 'resolveFlag',
    params: { id: '{{mirrorFlagId}}' },
    body: { status: 'RESOLVED', resolutionNote: 'Mirror replaced' },
    status: 200,
    checks: [okTrue, is('status', 'RESOLVED')],
  },
  {
    operationId: 'resolveFlag',
    name: 'Resolve the flag the repair closed (409)',
    params: { id: '{{flagId}}' },
    body: { status: 'RESOLVED', resolutionNote: 'Hose replaced' },
    status: 409,
    checks: [is('ok', false), is('error', 'flag_already_resolved')],
  },
  // Tools.
  {
    operationId: 'createTool',
    body: {
      name: 'Impact driver 18V',
      category: 'Power tools',
      purchaseCost: 249,
      purchaseDate: '2025-01-15',
      pmIntervalDays: 90,
    },
    status: 201,
    save: { toolId: 'toolId' },
    checks: [okTrue, str('toolId'), str('scanToken')],
  },
  {
    operationId: 'createTool',
    name: 'Create a consumable',
    body: { name: 'Zip ties 8in', isConsumable: true, stockLevel: 20, minStockLevel: 10 },
    status: 201,
    save: { consumableId: 'toolId' },
    checks: [okTrue],
  },
  {
    operationId: 'createToolsBatch',
    body: [{ name: 'Torque wrench' }, { category: 'no name' }],
    status: 200,
    checks: [okTrue, is('results.0.ok', true), str('results.0.scanToken'), is('results.1.ok', false)],
  },
  { operationId: 'listTools', query: { limit: '10' }, status: 200, checks: [okTrue, { path: 'tools', type: 'array' }] },
  {
    operationId: 'listTools',
    name: 'Export tools as CSV',
    query: { format: 'csv', lowStock: 'false' },
    status: 200,
    contentType: 'text/csv',
  },
  {
    operationId: 'getTool',
    params: { id: '{{toolId}}' },
    query: { includeBookValue: 'true' },
    status: 200,
    checks: [okTrue, is('tool.id', '{{toolId}}'), { path: 'tool.bookValue', type: 'object' }],
  },
  {
    operationId: 'updateTool',
    params: { id: '{{toolId}}' },
    body: { assignedYardId: '{{yardId}}' },
    status: 200,
    checks: [okTrue, is('toolId', '{{toolId}}')],
  },
  {
    operationId: 'checkoutTool',
    params: { id: '{{toolId}}' },
    body: { toVehicleId: '{{assetId}}' },
    status: 200,
    checks: [okTrue, is('toolId', '{{toolId}}'), str('eventId')],
  },
  {
    operationId: 'checkinTool',
    params: { id: '{{toolId}}' },
    body: { condition: 'GOOD' },
    status: 200,
    checks: [okTrue, is('workOrderId', null)],
  },
  {
    operationId: 'reportTool',
    params: { id: '{{toolId}}' },
    body: { kind: 'REPLACEMENT_REQUEST', description: 'Chuck slips under load' },
    status: 200,
    checks: [okTrue, str('workOrderId')],
  },
  {
    operationId: 'adjustToolStock',
    params: { id: '{{consumableId}}' },
    body: { delta: -12, note: 'Used on the bridge job' },
    status: 201,
    checks: [okTrue, is('newStockLevel', 8), is('crossedThreshold', true)],
  },
  {
    operationId: 'adjustToolStock',
    name: 'Adjust stock of a non-consumable (409)',
    params: { id: '{{toolId}}' },
    body: { delta: 1 },
    status: 409,
    checks: [is('error', 'not_consumable')],
  },
  {
    operationId: 'markToolServiced',
    params: { id: '{{toolId}}' },
    body: { note: 'Brushes replaced' },
    status: 201,
    checks: [okTrue, str('newLastServicedAt')],
  },
  {
    operationId: 'listToolEvents',
    params: { id: '{{toolId}}' },
    query: { limit: '20' },
    status: 200,
    checks: [okTrue, { path: 'events', type: 'array' }],
  },
  {
    operationId: 'getToolUtilization',
    params: { id: '{{toolId}}' },
    query: { days: '30' },
    status: 200,
    checks: [okTrue, is('utilization.toolId', '{{toolId}}')],
  },
  { operationId: 'getToolQr', params: { id: '{{toolId}}' }, status: 200, contentType: 'image/png' },
  {
    operationId: 'getToolQr',
    name: 'QR label as SVG',
    params: { id: '{{toolId}}' },
    query: { fmt: 'svg' },
    status: 200,
    contentType: 'image/svg+xml',
  },
  // Webhooks. `webhookUrl` must be an https URL the server may call (see the collection's variables).
  {
    operationId: 'createWebhook',
    body: { url: '{{webhookUrl}}', events: ['flag.created', 'tool.low_stock'], description: 'Dispatch board' },
    status: 201,
    save: { webhookId: 'subscriptionId' },
    checks: [okTrue, str('subscriptionId'), str('secret')],
  },
  {
    operationId: 'createFlag',
    name: 'Raise a flag the webhook receives (queues a delivery)',
    body: { assetId: '{{assetId}}', severity: 'YELLOW', note: 'Seat belt frayed' },
    status: 201,
    checks: [okTrue],
  },
  { operationId: 'listWebhooks', status: 200, checks: [okTrue] },
  { operationId: 'getWebhook', params: { id: '{{webhookId}}' }, status: 200, checks: [okTrue] },
  {
    operationId: 'listWebhookDeliveries',
    params: { id: '{{webhookId}}' },
    query: { limit: '10' },
    status: 200,
    save: { deliveryId: 'deliveries.0.id' },
    checks: [okTrue, str('deliveries.0.id'), is('deliveries.0.event', 'flag.created')],
  },
  {
    operationId: 'resendWebhookDelivery',
    params: { id: '{{webhookId}}', deliveryId: '{{deliveryId}}' },
    status: 200,
    checks: [okTrue, { path: 'requeued', type: 'boolean' }, is('delivery.id', '{{deliveryId}}')],
  },
  {
    operationId: 'recoverWebhook',
    params: { id: '{{webhookId}}' },
    body: { since: '2026-01-01T00:00:00Z' },
    status: 200,
    checks: [okTrue, { path: 'requeued', type: 'number' }, is('nextCursor', null)],
  },
  {
    operationId: 'rotateWebhookSecret',
    params: { id: '{{webhookId}}' },
    body: { overlapSeconds: 3600 },
    status: 200,
    checks: [okTrue, str('secret'), str('previousSecretExpiresAt')],
  },
  {
    operationId: 'updateWebhook',
    params: { id: '{{webhookId}}' },
    body: { description: 'Dispatch board (paused)', active: false },
    status: 200,
    checks: [okTrue, is('webhook.active', false), str('webhook.disabledReason')],
  },
  {
    operationId: 'testWebhook',
    params: { id: '{{webhookId}}' },
    body: {},
    status: 200,
    checks: [okTrue, { path: 'delivered', type: 'boolean' }, str('signaturePreview')],
  },
  // The event feed: what the webhooks deliver, to poll or to catch up from.
  {
    operationId: 'listEvents',
    query: { type: 'asset.created,flag.created', limit: '5' },
    status: 200,
    save: { eventId: 'events.0.id' },
    checks: [okTrue, { path: 'events', type: 'array' }, str('events.0.id'), str('events.0.event')],
  },
  { operationId: 'getEvent', params: { id: '{{eventId}}' }, status: 200, checks: [okTrue, str('event.id')] },
  // People and keys: self-service for the organisation's administrators.
  {
    operationId: 'createUser',
    body: { email: 'mechanic-{{$timestamp}}@example.com', name: 'Mo Mechanic' },
    status: 201,
    save: { userId: 'userId' },
    checks: [okTrue, str('userId'), is('restored', false)],
  },
  {
    operationId: 'listUsers',
    query: { q: 'mechanic', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'users', type: 'array' }],
  },
  {
    operationId: 'getUser',
    params: { id: '{{userId}}' },
    status: 200,
    checks: [okTrue, is('user.id', '{{userId}}'), is('user.removedAt', null)],
  },
  {
    operationId: 'updateUser',
    params: { id: '{{userId}}' },
    body: { name: 'Mo the Mechanic' },
    status: 200,
    checks: [okTrue, is('user.name', 'Mo the Mechanic')],
  },
  {
    operationId: 'createApiKey',
    body: { label: 'Telematics sync', scopes: ['assets:read', 'hours:write'] },
    status: 201,
    save: { apiKeyId: 'apiKeyId' },
    checks: [okTrue, str('apiKeyId'), str('key'), { path: 'apiKey.scopes', type: 'array' }],
  },
  {
    operationId: 'listApiKeys',
    query: { limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'apiKeys', type: 'array' }],
  },
  {
    operationId: 'getApiKey',
    params: { id: '{{apiKeyId}}' },
    status: 200,
    checks: [okTrue, is('apiKey.id', '{{apiKeyId}}')],
  },
  {
    operationId: 'rollApiKey',
    params: { id: '{{apiKeyId}}' },
    body: { expireOldInSeconds: 3600 },
    status: 201,
    save: { rolledKeyId: 'apiKeyId' },
    checks: [okTrue, str('key'), is('previousKey.id', '{{apiKeyId}}')],
  },
  {
    operationId: 'revokeApiKey',
    params: { id: '{{rolledKeyId}}' },
    status: 200,
    checks: [okTrue, is('apiKeyId', '{{rolledKeyId}}')],
  },
  {
    operationId: 'removeUser',
    params: { id: '{{userId}}' },
    status: 200,
    checks: [okTrue, is('userId', '{{userId}}'), str('removedAt')],
  },
  // Clean up what can be deleted.
  { operationId: 'deleteWebhook', params: { id: '{{webhookId}}' }, status: 200, checks: [okTrue] },
  {
    operationId: 'deleteYard',
    params: { id: '{{spareYardId}}' },
    status: 200,
    checks: [okTrue, is('yardId', '{{spareYardId}}')],
  },
];

/** Placeholders replaced in a step's strings: `{{name}}` from `vars`, `{{$timestamp}}` with `now`. */
export function fill<T>(value: T, vars: Record<string, string>, now: number): T {
  const text = JSON.stringify(value);
  if (text === undefined) return value;
  const filled = text.replace(/\{\{(\$?[A-Za-z]+)\}\}/g, (match, name: string) =>
    name === '$timestamp' ? String(now) : name in vars ? vars[name] : match,
  );
  return JSON.parse(filled) as T;
}

export function valueAt(body: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((v, key) => (v == null ? undefined : (v as Record<string, unknown>)[key]), body);
}

/** Operations of the document without a walkthrough step: the generator names them so nobody ships one untested. */
export function missingSteps(operationIds: string[]): string[] {
  const covered = new Set(WALKTHROUGH.map((s) => s.operationId));
  return operationIds.filter((id) => !covered.has(id));
}
