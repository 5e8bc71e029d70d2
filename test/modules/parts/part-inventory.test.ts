import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makePart, makeYard } from '../../helpers/app/factories.ts';

let t: TestApp;
let acme: TestTenant;
let north: string;
let south: string;
beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant();
  north = await makeYard(t, acme.key, { name: 'North' });
  south = await makeYard(t, acme.key, { name: 'South' });
});
afterAll(() => t.close());

let seq = 0;
const newPart = (overrides: Record<string, unknown> = {}) =>
  makePart(t, acme.key, { number: `P-${++seq}`, ...overrides });
const adjust = (partId: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  t.api.post(`/api/v1/parts/${partId}/adjustments`, acme.key, { yardId: north, reason: 'found', ...body }, headers);
const transfer = (partId: string, body: Record<string, unknown>) =>
  t.api.post(`/api/v1/parts/${partId}/transfers`, acme.key, { fromYardId: north, toYardId: south, ...body });
const lowStockEvents = async (partId: string) =>
  (
    await t.db.sql.query<{ data: { partId: string; yardId: string; onHand: number; reorderPoint: number } }>(
      `SELECT data FROM events WHERE "orgId" = $1 AND type = 'part.low_stock' ORDER BY "createdAt", id`,
      [acme.orgId],
    )
  )
    .map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data))
    .filter((d) => d.partId === partId);

describe('adjustments', () => {
  it('adds at the given unitCost, else the part’s, and removes at the layers’ cost', async () => {
    const partId = await newPart({ unitCost: 7 });
    const first = await adjust(partId, { quantity: 10, unitCost: 5, reason: 'initial', note: 'opening count' });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      ok: true,
      currency: 'USD',
      entry: {
        partId,
        yardId: north,
        type: 'adjustment',
        quantity: 10,
        previousQuantity: 0,
        currentQuantity: 10,
        unitCost: 5,
        totalCost: 50,
        reason: 'initial',
        note: 'opening count',
        source: { type: 'adjustment', id: first.json().entry.id },
        createdBy: acme.userId,
      },
    });
    expect((await adjust(partId, { quantity: 10 })).json().entry).toMatchObject({ unitCost: 7, totalCost: 70 });
    const lost = await adjust(partId, { quantity: -15, reason: 'lost' });
    expect(lost.json().entry).toMatchObject({ quantity: -15, currentQuantity: 5, totalCost: 85, unitCost: 5.6667 });
  });

  it('records a count as the difference, and a count equal to the stock as an entry of 0', async () => {
    const partId = await newPart();
    await adjust(partId, { quantity: 4, unitCost: 2 });
    const down = await adjust(partId, { countedQuantity: 3, reason: 'count' });
    expect(down.json().entry).toMatchObject({ quantity: -1, previousQuantity: 4, currentQuantity: 3, totalCost: 2 });
    const same = await adjust(partId, { countedQuantity: 3, reason: 'count' });
    expect(same.statusCode).toBe(201);
    expect(same.json().entry).toMatchObject({
      quantity: 0,
      previousQuantity: 3,
      currentQuantity: 3,
      totalCost: 0,
      unitCost: 2,
    });
  });

  it('never takes stock below zero (409 insufficient_stock) and validates the body', async () => {
    const partId = await newPart();
    await adjust(partId, { quantity: 1 });
    const res = await adjust(partId, { quantity: -2, reason: 'damaged' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'insufficient_stock' });
    const both = await adjust(partId, { quantity: 1, countedQuantity: 1 });
    expect(both.statusCode).toBe(422);
    expect(both.json().fieldErrors.quantity).toBeDefined();
    const bad = await adjust(partId, { quantity: 0.00001, reason: 'whim', yardId: 'nope' });
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().fieldErrors).sort()).toEqual(['quantity', 'reason']);
    const yard = await adjust(partId, { quantity: 1, yardId: 'no-such-yard' });
    expect(yard.statusCode).toBe(422);
    expect(yard.json().fieldErrors.yardId).toBeDefined();
  });

  it('replays a retried adjustment with the same Idempotency-Key; another body with it is 422', async () => {
    const partId = await newPart();
    const headers = { 'idempotency-key': `adj-${partId}` };
    const first = await adjust(partId, { quantity: 2 }, headers);
    const retry = await adjust(partId, { quantity: 2 }, headers);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json().entry.id).toBe(first.json().entry.id);
    const other = await adjust(partId, { quantity: 3 }, headers);
    expect(other.statusCode).toBe(422);
    expect(other.json().error).toBe('idempotency_key_reused');
    const ledger = await t.api.get(`/api/v1/inventory/ledger?partId=${partId}`, acme.key);
    expect(ledger.json().entries).toHaveLength(1);
  });
});

describe('transfers', () => {
  it('writes two entries, keeps the total and moves the cost layers with the stock (FIFO at the destination)', async () => {
    const partId = await newPart();
    await adjust(partId, { quantity: 10, unitCost: 5 });
    await adjust(partId, { quantity: 10, unitCost: 7 });
    const res = await transfer(partId, { quantity: 15 });
    expect(res.statusCode).toBe(201);
    const { entries, transferId } = res.json();
    expect(entries.map((e: { type: string }) => e.type)).toEqual(['transfer_out', 'transfer_in']);
    expect(entries[0]).toMatchObject({
      yardId: north,
      quantity: -15,
      totalCost: 85,
      source: { type: 'transfer', id: transferId },
    });
    expect(entries[1]).toMatchObject({
      yardId: south,
      quantity: 15,
      totalCost: 85,
      source: { type: 'transfer', id: transferId },
    });
    const part = (await t.api.get(`/api/v1/parts/${partId}`, acme.key)).json().part;
    expect(part).toMatchObject({ onHand: 20, value: 120 });
    // The 10 at 5.00 arrived first at South: issuing 10 there costs 50.00.
    const out = await adjust(partId, { yardId: south, quantity: -10, reason: 'damaged' });
    expect(out.json().entry.totalCost).toBe(50);
  });

  it('refuses the same yard (422) and more than the source holds (409)', async () => {
    const partId = await newPart();
    await adjust(partId, { quantity: 1 });
    const same = await transfer(partId, { toYardId: north, quantity: 1 });
    expect(same.statusCode).toBe(422);
    expect(same.json().fieldErrors.toYardId).toBe('must differ from fromYardId');
    expect((await transfer(partId, { quantity: 2 })).json().error).toBe('insufficient_stock');
  });
});

describe('low stock', () => {
  it('fires part.low_stock once per crossing from above the reorder point to at or below it, per yard', async () => {
    const partId = await newPart({ reorderPoint: 5 });
    await adjust(partId, { quantity: 8 });
    await adjust(partId, { quantity: -2, reason: 'lost' }); // 6: above
    await adjust(partId, { quantity: -1, reason: 'lost' }); // 5: crosses
    await adjust(partId, { quantity: -1, reason: 'lost' }); // 4: still below, no event
    expect(await lowStockEvents(partId)).toEqual([
      expect.objectContaining({ partId, yardId: north, onHand: 5, reorderPoint: 5 }),
    ]);
    await adjust(partId, { quantity: 3 }); // 7: above again
    await transfer(partId, { quantity: 3 }); // North 4: crosses again; South 3 came in, never a crossing
    expect((await lowStockEvents(partId)).map((e) => [e.yardId, e.onHand])).toEqual([
      [north, 5],
      [north, 4],
    ]);
  });
});

describe('ledger and valuation', () => {
  it('lists entries newest first with partId, yardId, type and since filters, keyset-paginated', async () => {
    const partId = await newPart();
    const since = new Date().toISOString();
    await adjust(partId, { quantity: 5 });
    await transfer(partId, { quantity: 2 });
    await adjust(partId, { quantity: -1, reason: 'lost' });
    const list = async (q: string) =>
      (await t.api.get(`/api/v1/inventory/ledger?partId=${partId}&${q}`, acme.key)).json();
    const all = await list('');
    expect(all.entries.map((e: { type: string }) => e.type)).toEqual([
      'adjustment',
      'transfer_in',
      'transfer_out',
      'adjustment',
    ]);
    expect((await list(`yardId=${south}`)).entries).toHaveLength(1);
    expect((await list('type=transfer_in,transfer_out')).entries).toHaveLength(2);
    expect((await list(`since=${encodeURIComponent(since)}`)).entries).toHaveLength(4);
    const page1 = await list('limit=3');
    const page2 = await list(`limit=3&cursor=${page1.nextCursor}`);
    expect([...page1.entries, ...page2.entries].map((e: { id: string }) => e.id)).toEqual(
      all.entries.map((e: { id: string }) => e.id),
    );
    expect(page2.nextCursor).toBeNull();
    expect((await t.api.get('/api/v1/inventory/ledger?type=bogus', acme.key)).statusCode).toBe(422);
  });

  it('values every part and yard with stock, with the total, as JSON pages and as CSV', async () => {
    const tenant = await t.tenant('Valuer');
    const yard = await makeYard(t, tenant.key);
    const parts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await makePart(t, tenant.key, { number: `V-${i}`, name: i === 0 ? '=cmd, "quoted"' : `Part ${i}` });
      await t.api.post(`/api/v1/parts/${id}/adjustments`, tenant.key, {
        yardId: yard,
        quantity: i + 1,
        unitCost: 0.1,
        reason: 'initial',
      });
      parts.push(id);
    }
    const page1 = (await t.api.get('/api/v1/inventory/valuation?limit=2', tenant.key)).json();
    expect(page1).toMatchObject({ ok: true, currency: 'USD', total: { value: 0.6 } });
    expect(page1.rows).toHaveLength(2);
    const page2 = (
      await t.api.get(`/api/v1/inventory/valuation?limit=2&cursor=${page1.nextCursor}`, tenant.key)
    ).json();
    expect(page2.rows).toHaveLength(1);
    expect(page2.nextCursor).toBeNull();
    const csv = await t.api.get('/api/v1/inventory/valuation?format=csv', tenant.key);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('partId,partNumber,partName,yardId,onHand,value');
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.startsWith(parts[0]))).toBe(`${parts[0]},V-0,"'=cmd, ""quoted""",${yard},1,0.10`);
  });
});
