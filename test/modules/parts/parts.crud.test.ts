import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makePart, makeYard } from '../../helpers/app/factories.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let otherPartId: string;
let yardId: string;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
  other = await t.tenant('Other');
  otherPartId = await makePart(t, other.key);
  yardId = await makeYard(t, acme.key);
});
afterAll(() => t.close());

const adjust = (partId: string, body: Record<string, unknown>) =>
  t.api.post(`/api/v1/parts/${partId}/adjustments`, acme.key, { yardId, reason: 'initial', ...body });

describe('parts', () => {
  it('creates a part with defaults and reads it with its stock per yard and totals', async () => {
    const partId = await makePart(t, acme.key, { number: 'C-1', unitCost: 12.3456, reorderPoint: 2.5 });
    expect((await adjust(partId, { quantity: 3, unitCost: 10 })).statusCode).toBe(201);
    const res = await t.api.get(`/api/v1/parts/${partId}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      currency: 'USD',
      part: {
        id: partId,
        number: 'C-1',
        trackInventory: true,
        unitCost: 12.3456,
        reorderPoint: 2.5,
        onHand: 3,
        value: 30,
        archivedAt: null,
        stock: [{ yardId, onHand: 3, value: 30, atOrBelowReorderPoint: false }],
      },
    });
  });

  it('refuses a number already used, whatever its case (409 part_number_taken), on create and on PATCH', async () => {
    await makePart(t, acme.key, { number: 'Dup-1' });
    const res = await t.api.post('/api/v1/parts', acme.key, { number: 'dUP-1', name: 'x' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'part_number_taken' });
    const second = await makePart(t, acme.key, { number: 'Dup-2' });
    const patch = await t.api.patch(`/api/v1/parts/${second}`, acme.key, { number: 'DUP-1' });
    expect(patch.statusCode).toBe(409);
    // Another organisation may use the same number.
    expect((await t.api.post('/api/v1/parts', other.key, { number: 'DUP-1', name: 'x' })).statusCode).toBe(201);
  });

  it('validates the body (422 with fieldErrors)', async () => {
    const res = await t.api.post('/api/v1/parts', acme.key, { number: ' ', unitCost: 1.23456, reorderPoint: -1 });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['name', 'number', 'reorderPoint', 'unitCost']);
    const empty = await t.api.patch(`/api/v1/parts/${await makePart(t, acme.key, { number: 'V-1' })}`, acme.key, {});
    expect(empty.statusCode).toBe(422);
  });

  it('lists by number with q, category, yardId, belowReorderPoint and archived filters, keyset-paginated', async () => {
    const t2 = await t.tenant('Lister');
    const yard = await makeYard(t, t2.key);
    const a = await makePart(t, t2.key, { number: 'A-10', name: 'Air filter', category: 'Filters', reorderPoint: 5 });
    const b = await makePart(t, t2.key, { number: 'b-20', name: 'Hose', manufacturerPartNumber: 'MPN-77' });
    const c = await makePart(t, t2.key, { number: 'C-30', name: 'Cutting edge', category: 'filters' });
    const never = await makePart(t, t2.key, { number: 'D-40', name: 'Never stocked', reorderPoint: 1 });
    await t.api.post(`/api/v1/parts/${a}/adjustments`, t2.key, { yardId: yard, quantity: 5, reason: 'initial' });
    await t.api.post(`/api/v1/parts/${b}/adjustments`, t2.key, { yardId: yard, quantity: 1, reason: 'initial' });
    const ids = async (query: string) =>
      (await t.api.get(`/api/v1/parts?${query}`, t2.key)).json().parts.map((p: { id: string }) => p.id);
    expect(await ids('')).toEqual([a, b, c, never]);
    expect(await ids('q=mpn-7')).toEqual([b]);
    expect(await ids('q=filter')).toEqual([a]);
    expect(await ids('category=FILTERS')).toEqual([a, c]);
    expect(await ids(`yardId=${yard}`)).toEqual([a, b]);
    expect(await ids('belowReorderPoint=true')).toEqual([a, never]);
    const first = (await t.api.get('/api/v1/parts?limit=3', t2.key)).json();
    expect(first.parts.map((p: { id: string }) => p.id)).toEqual([a, b, c]);
    expect(await ids(`limit=3&cursor=${first.nextCursor}`)).toEqual([never]);
    const del = await t.api.delete(`/api/v1/parts/${c}`, t2.key);
    expect(del.json()).toMatchObject({ ok: true, partId: c, archivedAt: expect.any(String) });
    expect(await ids('')).toEqual([a, b, never]);
    expect(await ids('archived=true')).toEqual([c]);
    const again = await t.api.delete(`/api/v1/parts/${c}`, t2.key);
    expect(again.json().archivedAt).toBe(del.json().archivedAt);
    expect((await t.api.get(`/api/v1/parts/${c}`, t2.key)).json().part.archivedAt).toBe(del.json().archivedAt);
  });

  it('archives a part with stock, which still moves (stock is never stranded)', async () => {
    const partId = await makePart(t, acme.key, { number: 'ARC-1' });
    await adjust(partId, { quantity: 4 });
    expect((await t.api.delete(`/api/v1/parts/${partId}`, acme.key)).statusCode).toBe(200);
    const out = await adjust(partId, { quantity: -4, reason: 'returned_to_vendor' });
    expect(out.statusCode).toBe(201);
    expect(out.json().entry.currentQuantity).toBe(0);
  });

  it('refuses switching trackInventory off while a yard holds the part (409 part_has_stock), allows it at zero', async () => {
    const partId = await makePart(t, acme.key, { number: 'TRK-1' });
    await adjust(partId, { quantity: 2 });
    const res = await t.api.patch(`/api/v1/parts/${partId}`, acme.key, { trackInventory: false });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'part_has_stock' });
    await adjust(partId, { countedQuantity: 0, reason: 'count' });
    expect((await t.api.patch(`/api/v1/parts/${partId}`, acme.key, { trackInventory: false })).statusCode).toBe(200);
    const refused = await adjust(partId, { quantity: 1 });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toBe('inventory_not_tracked');
  });
});

securitySuite('parts', () => ({ t, tenant: acme }), [
  { label: 'GET /parts', method: 'GET', path: () => '/api/v1/parts', scope: 'parts:read' },
  {
    label: 'POST /parts',
    method: 'POST',
    path: () => '/api/v1/parts',
    scope: 'parts:write',
    body: { number: 'S', name: 'S' },
  },
  {
    label: 'GET /parts/:id',
    method: 'GET',
    path: () => `/api/v1/parts/${otherPartId}`,
    scope: 'parts:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /parts/:id',
    method: 'PATCH',
    path: () => `/api/v1/parts/${otherPartId}`,
    scope: 'parts:write',
    body: { name: 'x' },
    crossTenant: true,
  },
  {
    label: 'DELETE /parts/:id',
    method: 'DELETE',
    path: () => `/api/v1/parts/${otherPartId}`,
    scope: 'parts:write',
    crossTenant: true,
  },
  {
    label: 'POST /parts/:id/adjustments',
    method: 'POST',
    path: () => `/api/v1/parts/${otherPartId}/adjustments`,
    scope: 'parts:write',
    body: { yardId: 'y', quantity: 1, reason: 'found' },
    crossTenant: true,
  },
  {
    label: 'POST /parts/:id/transfers',
    method: 'POST',
    path: () => `/api/v1/parts/${otherPartId}/transfers`,
    scope: 'parts:write',
    body: { fromYardId: 'a', toYardId: 'b', quantity: 1 },
    crossTenant: true,
  },
  { label: 'GET /inventory/ledger', method: 'GET', path: () => '/api/v1/inventory/ledger', scope: 'parts:read' },
  { label: 'GET /inventory/valuation', method: 'GET', path: () => '/api/v1/inventory/valuation', scope: 'parts:read' },
]);
