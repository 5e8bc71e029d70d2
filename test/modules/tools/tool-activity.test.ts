import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { toolHelpers } from '../../helpers/tools/tool-helpers.ts';

let t: TestApp;
let acme: TestTenant;
const h = toolHelpers(() => ({ t, acme }));
const DAY = 86_400_000;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
});
afterAll(() => t.close());

describe('GET /tools/:id/events', () => {
  let toolId: string;
  let truckId: string;
  beforeAll(async () => {
    truckId = (
      await t.db.prisma.asset.create({
        data: { orgId: acme.orgId, nickname: 'Truck', assetClass: 'ON_ROAD', meterType: 'ODOMETER', meterUnit: 'mi' },
      })
    ).id;
    toolId = await h.createTool({ name: 'History drill' });
    const base = Date.now() - 10 * DAY;
    const rows = Array.from({ length: 7 }, (_, i) => ({
      orgId: acme.orgId,
      toolId,
      kind: (i % 2 === 0 ? 'CHECK_OUT' : 'CHECK_IN') as 'CHECK_OUT' | 'CHECK_IN',
      createdAt: new Date(base + i * DAY),
      actorId: i === 6 ? null : acme.userId,
      linkedAssetId: i === 2 ? truckId : null,
    }));
    await t.db.prisma.toolEvent.createMany({ data: rows });
    // the tool was created before that history
    await t.db.prisma.toolEvent.updateMany({
      where: { toolId, kind: 'AUDIT' },
      data: { createdAt: new Date(base - DAY) },
    });
  });
  const get = (q = '') => t.api.get(`/api/v1/tools/${toolId}/events${q}`, acme.key);

  it('lists newest first with the actor object (or null); tool_created is the oldest', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    const { events, nextCursor, toolId: id } = res.json();
    expect(id).toBe(toolId);
    expect(nextCursor).toBeNull();
    expect(events).toHaveLength(8);
    const times = events.map((e: { createdAt: string }) => Date.parse(e.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(events[events.length - 1]).toMatchObject({ kind: 'AUDIT', description: 'tool_created: name=History drill' });
    expect(events[events.length - 1].actor).toEqual({ id: acme.userId, name: 'Olive Ops', email: acme.email });
    expect(events[0].actor).toBeNull();
  });

  it('filters by kind CSV (unknown dropped), since, actorId and linkedAssetId', async () => {
    const kinds = (await get('?kind=check_in,NOPE')).json().events.map((e: { kind: string }) => e.kind);
    expect(kinds).toEqual(['CHECK_IN', 'CHECK_IN', 'CHECK_IN']);
    expect((await get('?kind=NOPE')).json().events).toHaveLength(8);
    const since = new Date(Date.now() - 5.5 * DAY).toISOString();
    expect((await get(`?since=${since}`)).json().events).toHaveLength(2);
    expect((await get(`?actorId=${acme.userId}`)).json().events).toHaveLength(7);
    const linked = (await get(`?linkedAssetId=${truckId}`)).json().events;
    expect(linked).toHaveLength(1);
    expect(linked[0].linkedAssetId).toBe(truckId);
    expect((await get('?since=not-a-date')).statusCode).toBe(422);
  });

  it('pages with the event id as cursor; limit is clamped to 1-200', async () => {
    const all = (await get()).json().events.map((e: { id: string }) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const body: any = (await get(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`)).json();
      seen.push(...body.events.map((e: { id: string }) => e.id));
      cursor = body.nextCursor;
      if (cursor) expect(cursor).toBe(body.events[body.events.length - 1].id);
    } while (cursor);
    expect(seen).toEqual(all);
    expect((await get('?limit=0')).json().events).toHaveLength(1);
    expect((await get('?limit=999')).json().events).toHaveLength(8);
    expect((await get('?cursor=unknown-id')).statusCode).toBe(422);
    // The cursor row is looked up inside the page's statement: the oldest event is a valid end (an empty
    // page), an event of another tool is not this list's cursor.
    const end = await get(`?cursor=${all[all.length - 1]}`);
    expect(end.statusCode).toBe(200);
    expect(end.json().events).toEqual([]);
    const otherTool = await h.createTool({ name: 'Other saw' });
    const foreign = await t.db.prisma.toolEvent.create({
      data: { orgId: acme.orgId, toolId: otherTool, kind: 'AUDIT' },
    });
    expect((await get(`?cursor=${foreign.id}`)).statusCode).toBe(422);
  });
});

describe('GET /tools/:id/utilization', () => {
  it('sums CHECK_OUT/CHECK_IN intervals clipped to the window, with hand-overs and an open checkout', async () => {
    const userB = (
      await t.db.prisma.user.create({ data: { orgId: acme.orgId, email: 'b@acme.example.com', name: 'Bea' } })
    ).id;
    const toolId = await h.createTool({ name: 'Busy saw' });
    const now = Date.now();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY);
    const ev = (kind: 'CHECK_OUT' | 'CHECK_IN', daysAgo: number, holderUserId: string | null) => ({
      orgId: acme.orgId,
      toolId,
      kind,
      createdAt: at(daysAgo),
      holderUserId,
    });
    await t.db.prisma.toolEvent.createMany({
      data: [
        ev('CHECK_OUT', 40, acme.userId),
        ev('CHECK_IN', 35, acme.userId), // entirely before the window
        ev('CHECK_OUT', 12, acme.userId),
        ev('CHECK_IN', 8, acme.userId), // open at window start: 2 days count
        ev('CHECK_OUT', 6, userB),
        ev('CHECK_IN', 5.5, userB), // 0.5 day
        ev('CHECK_OUT', 3, acme.userId),
        ev('CHECK_OUT', 2, userB), // forced hand-over: A 1 day, B open 2 days
      ],
    });
    const res = await t.api.get(`/api/v1/tools/${toolId}/utilization?days=10&topN=5`, acme.key);
    expect(res.statusCode).toBe(200);
    const u = res.json().utilization;
    expect(u.windowMs).toBe(10 * DAY);
    expect(Date.parse(u.windowEnd) - Date.parse(u.windowStart)).toBe(10 * DAY);
    expect(Math.abs(u.checkedOutMs - 5.5 * DAY)).toBeLessThan(60_000);
    expect(u.checkoutCount).toBe(4);
    expect(u.openAtWindowEnd).toBe(true);
    expect(u.utilizationPct).toBeCloseTo(0.55, 3);
    expect(u.topUsers).toHaveLength(2);
    expect(u.topUsers[0]).toMatchObject({
      userId: acme.userId,
      name: 'Olive Ops',
      email: acme.email,
      checkoutCount: 2,
    });
    expect(Math.abs(u.topUsers[0].checkedOutMs - 3 * DAY)).toBeLessThan(60_000);
    expect(u.topUsers[1]).toMatchObject({ userId: userB, checkoutCount: 2 });
    expect(Math.abs(u.topUsers[1].checkedOutMs - 2.5 * DAY)).toBeLessThan(60_000);

    const top1 = (await t.api.get(`/api/v1/tools/${toolId}/utilization?days=10&topN=1`, acme.key)).json().utilization;
    expect(top1.topUsers.map((x: { userId: string }) => x.userId)).toEqual([acme.userId]);
    expect(
      (await t.api.get(`/api/v1/tools/${toolId}/utilization?days=10&topN=0`, acme.key)).json().utilization.topUsers,
    ).toEqual([]);
  });

  it('defaults to 30 days and 3 users; clamps days to 1-365 and topN to 0-10', async () => {
    const toolId = await h.createTool({ name: 'Idle tool' });
    const get = async (q: string) =>
      (await t.api.get(`/api/v1/tools/${toolId}/utilization${q}`, acme.key)).json().utilization;
    expect(await get('')).toMatchObject({
      windowMs: 30 * DAY,
      checkedOutMs: 0,
      checkoutCount: 0,
      openAtWindowEnd: false,
      utilizationPct: 0,
      topUsers: [],
    });
    expect((await get('?days=5000')).windowMs).toBe(365 * DAY);
    expect((await get('?days=0')).windowMs).toBe(DAY);
  });

  it('counts a live checkout made through the API', async () => {
    const toolId = await h.createTool({ name: 'Live' });
    await t.api.post(`/api/v1/tools/${toolId}/checkout`, acme.key, {});
    const u = (await t.api.get(`/api/v1/tools/${toolId}/utilization?days=1`, acme.key)).json().utilization;
    expect(u).toMatchObject({ checkoutCount: 1, openAtWindowEnd: true });
    expect(u.topUsers[0].userId).toBe(acme.userId);
  });
});
