import { describe, expect, it } from 'vitest';
import { listAllName, methodName, resourceName, sdkMethodNames } from '../../scripts/sdk-naming.ts';

describe('SDK method naming (scripts/sdk-naming.ts)', () => {
  it.each([
    ['assets', 'listAssets', 'list'],
    ['assets', 'createAssetsBatch', 'createBatch'],
    ['tools', 'adjustToolStock', 'adjustStock'],
    ['tools', 'getToolQr', 'getQr'],
    ['hours', 'createHoursLog', 'create'],
    ['hours', 'listHours', 'list'],
    ['hours', 'createHoursBatch', 'createBatch'],
    ['api-keys', 'rollApiKey', 'roll'],
    ['work-orders', 'updateWorkOrder', 'update'],
    ['meta', 'getMyUsage', 'getMyUsage'],
    // Operations added later: their names follow without a change here.
    ['events', 'listEvents', 'list'],
    ['events', 'getEvent', 'get'],
    ['webhooks', 'resendWebhookDelivery', 'resendDelivery'],
    ['webhooks', 'recoverWebhook', 'recover'],
    ['webhooks', 'rotateWebhookSecret', 'rotateSecret'],
  ])('%s %s -> %s', (tag, operationId, name) => {
    expect(methodName(tag, operationId)).toBe(name);
  });

  it('derives resources and auto-paginating twins', () => {
    expect(resourceName('work-orders')).toBe('workOrders');
    expect(listAllName('list')).toBe('listAll');
    expect(listAllName('listEvents')).toBe('listAllEvents');
    expect(listAllName('search')).toBe('searchAll');
  });

  it('refuses to generate two methods with one name', () => {
    const op = {
      summary: '',
      method: 'GET',
      path: '/x',
      pathParams: [],
      queryParams: [],
      queryRequired: false,
      body: 'none' as const,
      bodyRef: null,
      multipart: false,
      success: 200,
      responseKind: 'json' as const,
      responseRef: null,
      items: null,
      textFormat: null,
      public: false,
    };
    expect(() =>
      sdkMethodNames([
        { ...op, tag: 'tools', operationId: 'getTool' },
        { ...op, tag: 'tools', operationId: 'getTools' },
      ]),
    ).toThrow(/tools.get would serve both getTool and getTools/);
  });
});
