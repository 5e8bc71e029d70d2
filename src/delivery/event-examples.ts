import type { EventData, EventType } from '../events/catalog.ts';
import { ACCESS_EVENT_EXAMPLES } from '../events/access-events.ts';

/**
 * One realistic payload per event type: the AsyncAPI document shows them as message examples, and the
 * test endpoint's synthetic flag.created is built from its entry. Typed against the catalog, so a payload
 * change that breaks them fails the type check.
 */
const AT = '2026-11-22T14:05:00.000Z';
const USER = 'usr_7f3c2a';

export const EVENT_EXAMPLES: { [T in EventType]: EventData<T> } = {
  'flag.created': {
    flagId: 'flg_01', assetId: 'ast_01', assetNickname: 'Loader 7', severity: 'RED', reason: 'Hydraulic leak at the boom cylinder',
    photoUrl: null, raisedBy: { userId: USER, name: 'Olive Ops' }, raisedAt: AT,
  },
  'flag.resolved': {
    flagId: 'flg_01', assetId: 'ast_01', severity: 'RED', resolutionNote: 'Replaced boom cylinder seal kit',
    resolvedBy: { userId: USER, name: 'Olive Ops' }, resolvedAt: AT, workOrderId: 'wo_01',
  },
  'hours.logged': {
    logId: 'log_01', assetId: 'ast_01', hoursReading: 1250.5, delta: 8.5, state: null, projectId: null,
    reviewStatus: 'ACCEPTED', loggedAt: AT, autoFlagId: null,
  },
  'asset.created': {
    assetId: 'ast_01', nickname: 'Loader 7', assetClass: 'off-road', customerAssetNumber: 'L-007', meterType: 'HOURS',
    lifecycleStatus: 'IN_SERVICE', actorId: USER, createdAt: AT,
  },
  'asset.updated': {
    assetId: 'ast_01', nickname: 'Loader 7', changedFields: ['lifecycleStatus'], lifecycleStatus: 'OUT_OF_SERVICE', actorId: USER, updatedAt: AT,
  },
  'workorder.created': {
    workOrderId: 'wo_01', number: 42, title: 'Replace boom cylinder seals', status: 'ASSIGNED', priority: 'HIGH', assetId: 'ast_01',
    projectId: null, flagId: 'flg_01', toolId: null, assignedToId: USER, dueAt: null, createdById: USER, createdAt: AT,
  },
  'workorder.completed': {
    workOrderId: 'wo_01', number: 42, title: 'Replace boom cylinder seals', assetId: 'ast_01', projectId: null, flagId: 'flg_01',
    totalLaborHours: 3.5, totalCost: 412.8, completedAt: AT, completedById: USER,
  },
  'tool.failure': {
    toolId: 'tl_01', name: 'Impact wrench 1/2"', kind: 'FAILURE_REPORT', description: 'Anvil cracked', newStatus: 'BROKEN',
    workOrderId: 'wo_02', eventId: 'tev_01', actorId: USER, at: AT,
  },
  'tool.checked_out': {
    toolId: 'tl_01', name: 'Impact wrench 1/2"', toUserId: USER, toVehicleId: null, linkedAssetId: 'ast_01', note: null, eventId: 'tev_02', actorId: USER, at: AT,
  },
  'tool.checked_in': {
    toolId: 'tl_01', name: 'Impact wrench 1/2"', condition: 'BROKEN', newStatus: 'BROKEN', workOrderId: 'wo_02', fromUserId: USER,
    eventId: 'tev_03', actorId: USER, at: AT,
  },
  'tool.low_stock': {
    toolId: 'tl_02', name: 'Nitrile gloves (box)', previousStockLevel: 6, newStockLevel: 4, minStockLevel: 5, thresholdUsed: 5,
    eventId: 'tev_04', actorId: USER, at: AT,
  },
  'tool.assignment_changed': {
    toolId: 'tl_01', name: 'Impact wrench 1/2"', changes: [{ type: 'yard', from: 'yrd_01', to: 'yrd_02' }], actorId: USER, at: AT,
  },
  'tool.serviced': {
    toolId: 'tl_01', name: 'Impact wrench 1/2"', previousLastServicedAt: null, newLastServicedAt: AT, pmIntervalDays: 90,
    actorId: USER, note: 'Greased and tested', eventId: 'tev_05',
  },
  'tool.created': {
    toolId: 'tl_01', name: 'Impact wrench 1/2"', category: 'Power tools', isConsumable: false, scanToken: 'tok_9xk2',
    purchaseCost: 289, actorId: USER, at: AT,
  },
  'asset.checked_out': {
    assetId: 'ast_01', nickname: 'Loader 7', toUserId: USER, toProjectId: 'prj_01', actorId: USER, expectedReturnAt: null, note: null, at: AT,
  },
  'asset.checked_in': {
    assetId: 'ast_01', nickname: 'Loader 7', fromUserId: USER, fromProjectId: 'prj_01', note: 'Returned clean', actorId: USER, at: AT,
  },
  ...ACCESS_EVENT_EXAMPLES,
};
