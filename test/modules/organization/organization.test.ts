import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makePart, makeWorkOrder, makeYard } from '../../helpers/app/factories.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
});
afterAll(() => t.close());

const patch = (body: Record<string, unknown>, key = acme.key) => t.api.patch('/api/v1/organization', key, body);

describe('organization settings', () => {
  it('reads USD and FIFO by default with any valid key', async () => {
    const { key } = await acme.newKey({ scopes: 'assets:read' });
    const res = await t.api.get('/api/v1/organization', key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      organization: { id: acme.orgId, slug: acme.slug, currency: 'USD', inventoryCostMethod: 'FIFO' },
    });
  });

  it('sets an ISO 4217 currency and names it in costed responses', async () => {
    const other = await t.tenant('Euro');
    const res = await patch({ currency: 'EUR' }, other.key);
    expect(res.json().organization.currency).toBe('EUR');
    expect((await t.api.get('/api/v1/parts', other.key)).json().currency).toBe('EUR');
    for (const currency of ['eur', 'EURO', 'XYZ', 12])
      expect((await patch({ currency }, other.key)).json().fieldErrors.currency).toBeDefined();
    expect((await patch({ inventoryCostMethod: 'LIFO' }, other.key)).statusCode).toBe(422);
    expect((await patch({}, other.key)).statusCode).toBe(422);
  });

  it('switching FIFO -> AVERAGE with stock merges the layers at their value; back to FIFO keeps that layer', async () => {
    const yardId = await makeYard(t, acme.key);
    const partId = await makePart(t, acme.key);
    for (const [quantity, unitCost] of [
      [10, 5],
      [10, 7],
    ])
      await t.api.post(`/api/v1/parts/${partId}/adjustments`, acme.key, {
        yardId,
        quantity,
        unitCost,
        reason: 'initial',
      });
    const valueOf = async () => (await t.api.get(`/api/v1/parts/${partId}`, acme.key)).json().part.value;
    expect((await patch({ inventoryCostMethod: 'AVERAGE' })).json().organization.inventoryCostMethod).toBe('AVERAGE');
    expect(await valueOf()).toBe(120);
    const wo = await makeWorkOrder(t, acme.key);
    const issue = (quantity: number) =>
      t.api.post(`/api/v1/work-orders/${wo}/parts`, acme.key, { partId, yardId, quantity });
    expect((await issue(5)).json().line.totalCost).toBe(30);
    expect(await valueOf()).toBe(90);
    await patch({ inventoryCostMethod: 'FIFO' });
    expect(await valueOf()).toBe(90);
    // FIFO from AVERAGE: the merged layer (15 at 6.00) is the oldest, then a new receipt at 1.00.
    await t.api.post(`/api/v1/parts/${partId}/adjustments`, acme.key, {
      yardId,
      quantity: 5,
      unitCost: 1,
      reason: 'found',
    });
    expect((await issue(16)).json().line.totalCost).toBe(91);
    expect(await valueOf()).toBe(4);
  });
});

securitySuite('organization', () => ({ t, tenant: acme }), [
  { label: 'GET /organization', method: 'GET', path: () => '/api/v1/organization', scope: null },
  {
    label: 'PATCH /organization',
    method: 'PATCH',
    path: () => '/api/v1/organization',
    scope: 'organization:write',
    body: { currency: 'USD' },
  },
]);
