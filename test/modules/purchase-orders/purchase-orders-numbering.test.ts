import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeWorkOrder } from '../../helpers/app/factories.ts';

// Run once on PostgreSQL too: TEST_DATABASE_URL=postgresql://... npx vitest run <this file>.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('purchase order numbers', () => {
  it('are 1..n without gaps or repeats under concurrent creates, per organisation', async () => {
    const a = await t.tenant('Numbering A');
    const b = await t.tenant('Numbering B');
    const creates = Array.from({ length: 12 }, (_, i) =>
      t.api.post('/api/v1/purchase-orders', i % 3 === 2 ? b.key : a.key, {}),
    );
    // Work orders of the same organisation number on the same row at the same time.
    const workOrders = Array.from({ length: 4 }, () => makeWorkOrder(t, a.key));
    const results = await Promise.all(creates);
    await Promise.all(workOrders);
    for (const r of results) expect(r.statusCode, r.body).toBe(201);
    const numbers = (key: string) =>
      results
        .filter((_, i) => (i % 3 === 2 ? b.key : a.key) === key)
        .map((r) => r.json().number as number)
        .sort((x, y) => x - y);
    expect(numbers(a.key)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(numbers(b.key)).toEqual([1, 2, 3, 4]);
  });

  it('does not spend a number on a create that fails', async () => {
    const c = await t.tenant('Numbering C');
    expect((await t.api.post('/api/v1/purchase-orders', c.key, {})).json().number).toBe(1);
    const bad = await t.api.post('/api/v1/purchase-orders', c.key, { vendorId: 'nope' });
    expect(bad.statusCode).toBe(422);
    expect((await t.api.post('/api/v1/purchase-orders', c.key, {})).json().number).toBe(2);
  });
});
