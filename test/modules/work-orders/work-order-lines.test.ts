import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makePart, makeWorkOrder, makeYard } from '../../helpers/app/factories.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let yardId: string;
let otherWorkOrderId: string;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
  other = await t.tenant('Other');
  yardId = await makeYard(t, acme.key);
  otherWorkOrderId = await makeWorkOrder(t, other.key);
});
afterAll(() => t.close());

let seq = 0;
async function stockedPart(receipts: [number, number][], overrides: Record<string, unknown> = {}) {
  const partId = await makePart(t, acme.key, { number: `WO-${++seq}`, ...overrides });
  for (const [quantity, unitCost] of receipts)
    await t.api.post(`/api/v1/parts/${partId}/adjustments`, acme.key, {
      yardId,
      quantity,
      unitCost,
      reason: 'initial',
    });
  return partId;
}
const issue = (workOrderId: string, body: Record<string, unknown>) =>
  t.api.post(`/api/v1/work-orders/${workOrderId}/parts`, acme.key, { yardId, ...body });
const detail = async (id: string) => (await t.api.get(`/api/v1/work-orders/${id}`, acme.key)).json();
const setMethod = (inventoryCostMethod: string) =>
  t.api.patch('/api/v1/organization', acme.key, { inventoryCostMethod });

describe('part lines', () => {
  it('FIFO: 10 at 5.00 and 10 at 7.00, issue 15 costs 85.00 and leaves 35.00 on the shelf', async () => {
    const partId = await stockedPart([
      [10, 5],
      [10, 7],
    ]);
    const wo = await makeWorkOrder(t, acme.key);
    const res = await issue(wo, { partId, quantity: 15 });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      ok: true,
      currency: 'USD',
      line: { partId, yardId, quantity: 15, unitCost: 5.6667, totalCost: 85 },
    });
    expect(res.json().lineId).toBe(res.json().line.id);
    expect((await t.api.get(`/api/v1/parts/${partId}`, acme.key)).json().part.value).toBe(35);
    const ledger = (await t.api.get(`/api/v1/inventory/ledger?partId=${partId}&type=issue`, acme.key)).json();
    expect(ledger.entries[0]).toMatchObject({ quantity: -15, totalCost: 85, source: { type: 'work_order', id: wo } });
  });

  it('AVERAGE: the same movements cost 90.00 and leave 30.00', async () => {
    expect((await setMethod('AVERAGE')).statusCode).toBe(200);
    try {
      const partId = await stockedPart([
        [10, 5],
        [10, 7],
      ]);
      const wo = await makeWorkOrder(t, acme.key);
      expect((await issue(wo, { partId, quantity: 15 })).json().line).toMatchObject({ unitCost: 6, totalCost: 90 });
      expect((await t.api.get(`/api/v1/parts/${partId}`, acme.key)).json().part.value).toBe(30);
    } finally {
      await setMethod('FIFO');
    }
  });

  it('freezes the cost on the line; deleting it returns the quantity at that cost', async () => {
    const partId = await stockedPart([[2, 5]], { unitCost: 5 });
    const wo = await makeWorkOrder(t, acme.key);
    const line = (await issue(wo, { partId, quantity: 2 })).json().line;
    await t.api.patch(`/api/v1/parts/${partId}`, acme.key, { unitCost: 9 });
    await t.api.post(`/api/v1/parts/${partId}/adjustments`, acme.key, { yardId, quantity: 1, reason: 'found' });
    expect((await detail(wo)).workOrder.parts).toEqual([
      expect.objectContaining({ id: line.id, unitCost: 5, totalCost: 10 }),
    ]);
    const del = await t.api.delete(`/api/v1/work-orders/${wo}/parts/${line.id}`, acme.key);
    expect(del.statusCode).toBe(200);
    const part = (await t.api.get(`/api/v1/parts/${partId}`, acme.key)).json().part;
    expect(part).toMatchObject({ onHand: 3, value: 19 });
    const returned = (await t.api.get(`/api/v1/inventory/ledger?partId=${partId}&type=return`, acme.key)).json();
    expect(returned.entries[0]).toMatchObject({
      quantity: 2,
      unitCost: 5,
      totalCost: 10,
      source: { type: 'work_order', id: wo },
    });
    expect((await detail(wo)).workOrder.parts).toEqual([]);
    expect((await t.api.delete(`/api/v1/work-orders/${wo}/parts/${line.id}`, acme.key)).statusCode).toBe(404);
  });

  it('costs a part that does not track inventory at its unitCost, with no ledger entry', async () => {
    const partId = await makePart(t, acme.key, { number: 'UNTRACKED', unitCost: 3.3333, trackInventory: false });
    const wo = await makeWorkOrder(t, acme.key);
    const res = await t.api.post(`/api/v1/work-orders/${wo}/parts`, acme.key, { partId, quantity: 3 });
    expect(res.json().line).toMatchObject({ yardId: null, quantity: 3, unitCost: 3.3333, totalCost: 10 });
    const ledger = (await t.api.get(`/api/v1/inventory/ledger?partId=${partId}`, acme.key)).json();
    expect(ledger.entries).toEqual([]);
  });

  it('refuses more than the yard holds (409), unknown references (422) and a closed work order (409)', async () => {
    const partId = await stockedPart([[1, 1]]);
    const wo = await makeWorkOrder(t, acme.key);
    expect((await issue(wo, { partId, quantity: 2 })).json().error).toBe('insufficient_stock');
    expect((await issue(wo, { partId: 'nope', quantity: 1 })).json().fieldErrors.partId).toBeDefined();
    expect((await issue(wo, { partId, yardId: 'nope', quantity: 1 })).json().fieldErrors.yardId).toBeDefined();
    expect((await t.api.post(`/api/v1/work-orders/${wo}/parts`, acme.key, { partId, quantity: 1 })).statusCode).toBe(
      422,
    );
    expect((await issue(wo, { partId, quantity: 0 })).statusCode).toBe(422);
    for (const status of ['DONE', 'CANCELED']) {
      const closed = await makeWorkOrder(t, acme.key);
      await t.api.patch(`/api/v1/work-orders/${closed}`, acme.key, { status });
      const res = await issue(closed, { partId, quantity: 1 });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('work_order_closed');
      expect(
        (await t.api.post(`/api/v1/work-orders/${closed}/labor`, acme.key, { hours: 1, rate: 1 })).statusCode,
      ).toBe(409);
    }
  });

  it('never oversells the last units to 20 concurrent requests', async () => {
    const partId = await stockedPart([[5, 2]]);
    const wo = await makeWorkOrder(t, acme.key);
    const results = await Promise.all(Array.from({ length: 20 }, () => issue(wo, { partId, quantity: 1 })));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(5);
    expect(codes.filter((c) => c === 409)).toHaveLength(15);
    const part = (await t.api.get(`/api/v1/parts/${partId}`, acme.key)).json().part;
    expect(part).toMatchObject({ onHand: 0, value: 0 });
    expect((await detail(wo)).workOrder.costs.parts).toBe(10);
  });
});

describe('labour lines and costs', () => {
  it('adds hours x rate half-up to the cent and totals parts and labour in the detail', async () => {
    const partId = await stockedPart([
      [3, 0.1],
      [3, 0.2],
    ]);
    const wo = await makeWorkOrder(t, acme.key);
    await issue(wo, { partId, quantity: 1 });
    await issue(wo, { partId, quantity: 3 }); // 0.10 + 0.10 + 0.20 = 0.40
    const labor = await t.api.post(`/api/v1/work-orders/${wo}/labor`, acme.key, {
      hours: 2.5,
      rate: 84.4,
      technicianId: acme.userId,
      description: 'Hoses',
    });
    expect(labor.statusCode).toBe(201);
    expect(labor.json().line).toMatchObject({ hours: 2.5, rate: 84.4, totalCost: 211, technicianId: acme.userId });
    const odd = await t.api.post(`/api/v1/work-orders/${wo}/labor`, acme.key, { hours: 0.33, rate: 10.015 });
    expect(odd.json().line.totalCost).toBe(3.3);
    const d = await detail(wo);
    expect(d.currency).toBe('USD');
    expect(d.workOrder.costs).toEqual({ parts: 0.5, labor: 214.3, total: 214.8 });
    expect(d.workOrder.labor).toHaveLength(2);
    expect((await t.api.delete(`/api/v1/work-orders/${wo}/labor/${odd.json().lineId}`, acme.key)).statusCode).toBe(200);
    expect((await detail(wo)).workOrder.costs).toEqual({ parts: 0.5, labor: 211, total: 211.5 });
    const bad = await t.api.post(`/api/v1/work-orders/${wo}/labor`, acme.key, {
      hours: 1.234,
      rate: 1.23456,
      technicianId: 'x',
    });
    expect(Object.keys(bad.json().fieldErrors).sort()).toEqual(['hours', 'rate']);
    const unknown = await t.api.post(`/api/v1/work-orders/${wo}/labor`, acme.key, {
      hours: 1,
      rate: 1,
      technicianId: 'x',
    });
    expect(unknown.json().fieldErrors.technicianId).toBeDefined();
  });
});

securitySuite('work-order lines', () => ({ t, tenant: acme }), [
  {
    label: 'POST /work-orders/:id/parts',
    method: 'POST',
    path: () => `/api/v1/work-orders/${otherWorkOrderId}/parts`,
    scope: 'workorders:write',
    body: { partId: 'p', yardId: 'y', quantity: 1 },
    crossTenant: true,
  },
  {
    label: 'DELETE /work-orders/:id/parts/:lineId',
    method: 'DELETE',
    path: () => `/api/v1/work-orders/${otherWorkOrderId}/parts/x`,
    scope: 'workorders:write',
    crossTenant: true,
  },
  {
    label: 'POST /work-orders/:id/labor',
    method: 'POST',
    path: () => `/api/v1/work-orders/${otherWorkOrderId}/labor`,
    scope: 'workorders:write',
    body: { hours: 1, rate: 1 },
    crossTenant: true,
  },
  {
    label: 'DELETE /work-orders/:id/labor/:lineId',
    method: 'DELETE',
    path: () => `/api/v1/work-orders/${otherWorkOrderId}/labor/x`,
    scope: 'workorders:write',
    crossTenant: true,
  },
]);
