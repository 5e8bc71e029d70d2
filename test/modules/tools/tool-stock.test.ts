import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { toolHelpers } from '../../helpers/tools/tool-helpers.ts';

let t: TestApp;
let acme: TestTenant;
const h = toolHelpers(() => ({ t, acme }));
const adjust = (id: string, body: unknown) => t.api.post(`/api/v1/tools/${id}/adjust-stock`, acme.key, body);
const serviced = (id: string, body?: unknown) => t.api.post(`/api/v1/tools/${id}/mark-serviced`, acme.key, body);
const DAY = 86_400_000;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
});
afterAll(() => t.close());

describe('POST /tools/:id/adjust-stock', () => {
  it('applies the delta, answers 201 and records the stock_adjusted audit event', async () => {
    const id = await h.createTool({ name: 'Zip ties', isConsumable: true, stockLevel: 20 });
    const res = await adjust(id, { delta: -3, note: 'job 42' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      ok: true,
      toolId: id,
      previousStockLevel: 20,
      newStockLevel: 17,
      crossedThreshold: false,
    });
    expect((await h.toolEvents(id)).find((e) => e.id === body.eventId)).toMatchObject({
      kind: 'AUDIT',
      description: 'stock_adjusted: delta=-3 new_level=17 note=job 42',
    });
  });

  it('truncates fractional deltas, clamps at zero and omits an absent note', async () => {
    const id = await h.createTool({ name: 'Rivets', isConsumable: true, stockLevel: 3 });
    expect((await adjust(id, { delta: 2.9 })).json()).toMatchObject({ previousStockLevel: 3, newStockLevel: 5 });
    const res = (await adjust(id, { delta: -10.7 })).json();
    expect(res).toMatchObject({ previousStockLevel: 5, newStockLevel: 0 });
    expect((await h.toolEvents(id)).find((e) => e.id === res.eventId)?.description).toBe(
      'stock_adjusted: delta=-10 new_level=0',
    );
  });

  it('starts from 0 when a consumable has no stock level yet', async () => {
    const id = await h.createTool({ name: 'Fresh', isConsumable: true });
    expect((await adjust(id, { delta: 4 })).json()).toMatchObject({ previousStockLevel: 0, newStockLevel: 4 });
  });

  it.each([
    [{}, 'delta'],
    [{ delta: 0 }, 'delta'],
    [{ delta: 0.4 }, 'delta'],
    [{ delta: 'five' }, 'delta'],
    [{ delta: 1, note: 'x'.repeat(201) }, 'note'],
  ])('422 for %j', async (body, field) => {
    const id = await h.createTool({ name: 'Bad', isConsumable: true, stockLevel: 1 });
    const res = await adjust(id, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });

  it('409 for a tool that is not a consumable', async () => {
    const id = await h.createTool({ name: 'Drill' });
    const res = await adjust(id, { delta: 1 });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('not_consumable');
  });

  it('crossedThreshold and tool.low_stock exactly once per crossing of COALESCE(minStockLevel, 5)', async () => {
    const id = await h.createTool({ name: 'Fuses', isConsumable: true, stockLevel: 7 });
    const steps = [
      [-1, false],
      [-1, true],
      [-1, false],
      [3, false],
      [-2, true],
    ] as const;
    for (const [delta, crossed] of steps) expect((await adjust(id, { delta })).json().crossedThreshold).toBe(crossed);
    const events = (await h.outbox('tool.low_stock')).filter((e) => e.toolId === id);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ previousStockLevel: 6, newStockLevel: 5, minStockLevel: null, thresholdUsed: 5 });
    const custom = await h.createTool({ name: 'Filters', isConsumable: true, stockLevel: 12, minStockLevel: 10 });
    expect((await adjust(custom, { delta: -2 })).json().crossedThreshold).toBe(true);
    expect((await h.outbox('tool.low_stock')).find((e) => e.toolId === custom)).toMatchObject({
      minStockLevel: 10,
      thresholdUsed: 10,
      newStockLevel: 10,
    });
  });

  it('loses no update under concurrent adjustments', async () => {
    const id = await h.createTool({ name: 'Washers', isConsumable: true, stockLevel: 1000 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => adjust(id, { delta: i % 2 === 0 ? -7 : 3 })),
    );
    expect(results.every((r) => r.statusCode === 201)).toBe(true);
    const tool = await t.db.prisma.tool.findUnique({ where: { id } });
    expect(tool?.stockLevel).toBe(1000 + 10 * -7 + 10 * 3);
  });

  it("serialises concurrent calls: each one sees the previous one's result", async () => {
    const id = await h.createTool({ name: 'Nuts', isConsumable: true, stockLevel: 100 });
    const results = await Promise.all(Array.from({ length: 20 }, () => adjust(id, { delta: -1 })));
    const previous = results.map((r) => r.json().previousStockLevel).sort((a, b) => b - a);
    expect(previous).toEqual(Array.from({ length: 20 }, (_, i) => 100 - i));
    expect((await t.db.prisma.tool.findUnique({ where: { id } }))?.stockLevel).toBe(80);
  });

  it('crosses the threshold exactly once when concurrent decrements pass through it', async () => {
    const id = await h.createTool({ name: 'Tape rolls', isConsumable: true, stockLevel: 15 });
    const results = await Promise.all(Array.from({ length: 10 }, () => adjust(id, { delta: -2 })));
    expect(results.filter((r) => r.json().crossedThreshold)).toHaveLength(1);
    expect((await h.outbox('tool.low_stock')).filter((e) => e.toolId === id)).toHaveLength(1);
    expect((await t.db.prisma.tool.findUnique({ where: { id } }))?.stockLevel).toBe(0);
  });
});

describe('POST /tools/:id/mark-serviced', () => {
  it('422 when the tool has no pmIntervalDays, or `at` is invalid or in the future', async () => {
    const none = await h.createTool({ name: 'No PM' });
    const res = await serviced(none);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('pmIntervalDays');
    const pm = await h.createTool({ name: 'PM', pmIntervalDays: 10 });
    expect((await serviced(pm, { at: 'yesterday' })).json().fieldErrors).toHaveProperty('at');
    expect((await serviced(pm, { at: new Date(Date.now() + 2 * DAY).toISOString() })).statusCode).toBe(422);
  });

  it('records pm_serviced, emits tool.serviced, truncates the note and takes the tool off pmOverdue', async () => {
    const fresh = await t.tenant('Pm');
    const id = await h.createTool({ name: 'Generator', pmIntervalDays: 30 }, fresh.key);
    await t.db.prisma.tool.update({ where: { id }, data: { createdAt: new Date(Date.now() - 40 * DAY) } });
    const overdue = async () =>
      (await t.api.get('/api/v1/tools?pmOverdue=true', fresh.key)).json().tools.map((x: { id: string }) => x.id);
    expect(await overdue()).toEqual([id]);
    const at = new Date(Date.now() - DAY).toISOString();
    const first = await t.api.post(`/api/v1/tools/${id}/mark-serviced`, fresh.key, { at, note: 'n'.repeat(600) });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ ok: true, toolId: id, previousLastServicedAt: null, newLastServicedAt: at });
    expect(await overdue()).toEqual([]);
    const event = (await h.toolEvents(id)).find((e) => e.id === first.json().eventId);
    expect(event?.description).toBe(`pm_serviced: interval=30d serviced_at=${at} note=${'n'.repeat(500)}`);
    const emitted = (await h.outbox('tool.serviced', fresh.orgId)).find((e) => e.toolId === id);
    expect(emitted).toMatchObject({
      previousLastServicedAt: null,
      newLastServicedAt: at,
      pmIntervalDays: 30,
      actorId: fresh.userId,
    });
    expect(emitted?.note).toHaveLength(500);
    const second = await t.api.post(`/api/v1/tools/${id}/mark-serviced`, fresh.key);
    expect(second.json().previousLastServicedAt).toBe(at);
    expect(Date.parse(second.json().newLastServicedAt)).toBeGreaterThan(Date.parse(at));
  });

  it('accepts a request with no body at all (the body is optional)', async () => {
    const id = await h.createTool({ name: 'Compressor', pmIntervalDays: 90 });
    const bare = await t.api.raw('POST', `/api/v1/tools/${id}/mark-serviced`, acme.key);
    expect(bare.statusCode, bare.body).toBe(201);
    const emptyJson = await t.api.raw('POST', `/api/v1/tools/${id}/mark-serviced`, acme.key, '', {
      'content-type': 'application/json',
    });
    expect(emptyJson.statusCode, emptyJson.body).toBe(201);
  });
});
