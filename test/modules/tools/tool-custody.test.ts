import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { toolHelpers } from '../../helpers/tools/tool-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let secondUserId: string;
let truckId: string;
const h = toolHelpers(() => ({ t, acme }));
const checkout = (id: string, body: Record<string, unknown> = {}) =>
  t.api.post(`/api/v1/tools/${id}/checkout`, acme.key, body);
const checkin = (id: string, body: Record<string, unknown>) =>
  t.api.post(`/api/v1/tools/${id}/checkin`, acme.key, body);
const report = (id: string, body: Record<string, unknown>) => t.api.post(`/api/v1/tools/${id}/report`, acme.key, body);
const tool = async (id: string) => (await t.api.get(`/api/v1/tools/${id}`, acme.key)).json().tool;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  secondUserId = (
    await t.db.prisma.user.create({ data: { orgId: acme.orgId, email: 'second@acme.example.com', name: 'Sam Second' } })
  ).id;
  truckId = (
    await t.db.prisma.asset.create({
      data: { orgId: acme.orgId, nickname: 'Truck 7', assetClass: 'ON_ROAD', meterType: 'ODOMETER', meterUnit: 'mi' },
    })
  ).id;
});
afterAll(() => t.close());

describe('POST /tools/:id/checkout', () => {
  it('checks out to a user, records CHECK_OUT and tool.checked_out', async () => {
    const id = await h.createTool({ name: 'Drill' });
    const res = await checkout(id, {
      toUserId: acme.userId,
      toVehicleId: truckId,
      linkedAssetId: truckId,
      note: 'for the job',
    });
    expect(res.statusCode).toBe(200);
    const { eventId } = res.json();
    expect(res.json()).toEqual({ ok: true, toolId: id, eventId });
    expect(await tool(id)).toMatchObject({
      checkedOutToUserId: acme.userId,
      checkedOutVehicleId: truckId,
      checkedOutAssetId: truckId,
      checkedOutAt: expect.any(String),
    });
    const event = (await h.toolEvents(id)).find((e) => e.id === eventId);
    expect(event).toMatchObject({
      kind: 'CHECK_OUT',
      description: 'for the job',
      linkedAssetId: truckId,
      holderUserId: acme.userId,
      actorId: acme.userId,
    });
    expect((await h.outbox('tool.checked_out')).find((e) => e.toolId === id)).toMatchObject({
      toUserId: acme.userId,
      toVehicleId: truckId,
      linkedAssetId: truckId,
      eventId,
    });
  });

  it("defaults the target to the key's user and is idempotent per (tool, user): no second event", async () => {
    const id = await h.createTool({ name: 'Hammer' });
    const first = (await checkout(id)).json();
    const again = await checkout(id, { toUserId: acme.userId });
    expect(again.statusCode).toBe(200);
    expect(again.json().eventId).toBe(first.eventId);
    expect((await h.toolEvents(id)).filter((e) => e.kind === 'CHECK_OUT')).toHaveLength(1);
    expect((await h.outbox('tool.checked_out')).filter((e) => e.toolId === id)).toHaveLength(1);
  });

  it('is idempotent per (tool, user): a repeat to the holder changes nothing; force re-points it', async () => {
    const id = await h.createTool({ name: 'Jack' });
    const first = (await checkout(id, { toUserId: acme.userId })).json();
    const repeat = await checkout(id, { toUserId: acme.userId, toVehicleId: truckId });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json().eventId).toBe(first.eventId);
    expect(await tool(id)).toMatchObject({ checkedOutToUserId: acme.userId, checkedOutVehicleId: null });
    const sent = (await h.outbox('tool.checked_out', acme.orgId)).filter((e) => e.toolId === id);
    expect(sent).toHaveLength(1);
    const moved = await checkout(id, { toUserId: acme.userId, toVehicleId: truckId, force: true });
    expect(moved.json().eventId).not.toBe(first.eventId);
    expect(await tool(id)).toMatchObject({ checkedOutToUserId: acme.userId, checkedOutVehicleId: truckId });
    expect((await checkout(id, { toVehicleId: truckId })).statusCode).toBe(409);
  });

  it('409 for another user unless force; force hands the tool over', async () => {
    const id = await h.createTool({ name: 'Saw' });
    await checkout(id, { toUserId: acme.userId });
    const conflict = await checkout(id, { toUserId: secondUserId });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ ok: false, error: 'tool_checked_out', checkedOutToUserId: acme.userId });
    const forced = await checkout(id, { toUserId: secondUserId, force: true });
    expect(forced.statusCode).toBe(200);
    expect((await tool(id)).checkedOutToUserId).toBe(secondUserId);
  });

  it.each(['RETIRED', 'MISSING'])('409 when the tool is %s, even with force', async (status) => {
    const id = await h.createTool({ name: `Gone ${status}` });
    await t.api.patch(`/api/v1/tools/${id}`, acme.key, { status });
    const res = await checkout(id, { force: true });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('tool_unavailable');
    expect((await tool(id)).checkedOutAt).toBeNull();
  });

  it('422 for a user, vehicle or linked asset of another organisation', async () => {
    const id = await h.createTool({ name: 'Level' });
    const foreignAsset = await t.db.prisma.asset.create({
      data: { orgId: other.orgId, nickname: 'Theirs', assetClass: 'TRAILER', meterType: 'NONE', meterUnit: 'none' },
    });
    const res = await checkout(id, {
      toUserId: other.userId,
      toVehicleId: foreignAsset.id,
      linkedAssetId: foreignAsset.id,
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['linkedAssetId', 'toUserId', 'toVehicleId']);
  });

  it('kit with includeChildren: parts that cannot go are skipped with a reason, the rest succeed', async () => {
    const kit = await h.createTool({ name: 'Socket kit' });
    const ok1 = await h.createTool({ name: 'Socket 10mm', parentKitId: kit });
    const ok2 = await h.createTool({ name: 'Socket 12mm', parentKitId: kit });
    const retired = await h.createTool({ name: 'Socket 13mm', parentKitId: kit });
    const missing = await h.createTool({ name: 'Socket 14mm', parentKitId: kit });
    const taken = await h.createTool({ name: 'Socket 15mm', parentKitId: kit });
    await t.api.patch(`/api/v1/tools/${retired}`, acme.key, { status: 'RETIRED' });
    await t.api.patch(`/api/v1/tools/${missing}`, acme.key, { status: 'MISSING' });
    await checkout(taken, { toUserId: secondUserId });
    const res = await checkout(kit, { includeChildren: true });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.kitId).toBe(kit);
    expect(body.succeeded.map((s: { id: string }) => s.id)).toEqual([kit, ok1, ok2]);
    expect(body.succeeded.every((s: { eventId: string }) => typeof s.eventId === 'string')).toBe(true);
    expect(body.skipped).toEqual([
      { id: retired, reason: 'retired' },
      { id: missing, reason: 'missing' },
      { id: taken, reason: 'already_checked_out' },
    ]);
    expect((await tool(ok2)).checkedOutToUserId).toBe(acme.userId);
    expect((await tool(taken)).checkedOutToUserId).toBe(secondUserId);
  });
});

describe('POST /tools/:id/checkin', () => {
  it('condition sets the status, clears custody and emits tool.checked_in without a work order', async () => {
    const id = await h.createTool({ name: 'Grinder' });
    await checkout(id, { toUserId: secondUserId });
    const res = await checkin(id, { condition: 'NEEDS_ATTENTION', note: 'wobbly' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, toolId: id, workOrderId: null });
    expect(await tool(id)).toMatchObject({ status: 'NEEDS_ATTENTION', checkedOutToUserId: null, checkedOutAt: null });
    const event = (await h.outbox('tool.checked_in')).find((e) => e.toolId === id);
    expect(event).toMatchObject({
      condition: 'NEEDS_ATTENTION',
      newStatus: 'NEEDS_ATTENTION',
      workOrderId: null,
      fromUserId: secondUserId,
      eventId: res.json().eventId,
    });
    expect(await t.db.prisma.workOrder.count({ where: { toolId: id } })).toBe(0);
    expect((await h.outbox('tool.failure')).filter((e) => e.toolId === id)).toHaveLength(0);
  });

  it('BROKEN opens a HIGH work order for the tool and emits tool.failure', async () => {
    const id = await h.createTool({ name: 'Nailer' });
    await checkout(id);
    const res = await checkin(id, { condition: 'BROKEN', note: 'trigger snapped' });
    const { workOrderId, eventId } = res.json();
    expect(workOrderId).toEqual(expect.any(String));
    const wo = await t.db.prisma.workOrder.findUnique({ where: { id: workOrderId } });
    expect(wo).toMatchObject({
      orgId: acme.orgId,
      toolId: id,
      priority: 'HIGH',
      status: 'OPEN',
      description: 'trigger snapped',
    });
    expect((await tool(id)).status).toBe('BROKEN');
    expect((await h.outbox('tool.checked_in')).find((e) => e.toolId === id)).toMatchObject({
      condition: 'BROKEN',
      newStatus: 'BROKEN',
      workOrderId,
    });
    expect((await h.outbox('tool.failure')).find((e) => e.toolId === id)).toMatchObject({
      workOrderId,
      eventId,
      newStatus: 'BROKEN',
    });
    expect((await h.outbox('workorder.created')).find((e) => e.workOrderId === workOrderId)).toMatchObject({
      toolId: id,
      priority: 'HIGH',
    });
  });

  it('without a condition only ends custody and keeps the status; an unknown condition is 422', async () => {
    const id = await h.createTool({ name: 'Plane' });
    await t.api.patch(`/api/v1/tools/${id}`, acme.key, { status: 'NEEDS_ATTENTION' });
    await checkout(id, { toUserId: acme.userId });
    const res = await checkin(id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json().workOrderId).toBeNull();
    expect(await tool(id)).toMatchObject({ status: 'NEEDS_ATTENTION', checkedOutToUserId: null });
    const sent = (await h.outbox('tool.checked_in', acme.orgId)).find((e) => e.toolId === id);
    expect(sent).toMatchObject({ condition: null, newStatus: 'NEEDS_ATTENTION' });
    expect((await checkin(id, { condition: 'RETIRED' })).statusCode).toBe(422);
  });
});

describe('POST /tools/:id/report', () => {
  it('FAILURE_REPORT (default): BROKEN, HIGH work order, tool.failure', async () => {
    const id = await h.createTool({ name: 'Compressor' });
    const res = await report(id, { description: 'no pressure', cost: 120 });
    expect(res.statusCode).toBe(200);
    const { workOrderId, eventId } = res.json();
    expect((await tool(id)).status).toBe('BROKEN');
    expect(await t.db.prisma.workOrder.findUnique({ where: { id: workOrderId } })).toMatchObject({
      priority: 'HIGH',
      toolId: id,
      estimateCost: 120,
    });
    expect((await h.toolEvents(id)).find((e) => e.id === eventId)).toMatchObject({
      kind: 'FAILURE_REPORT',
      description: 'no pressure',
      cost: 120,
      linkedWorkOrderId: workOrderId,
    });
    expect((await h.outbox('tool.failure')).find((e) => e.toolId === id)).toMatchObject({
      kind: 'FAILURE_REPORT',
      newStatus: 'BROKEN',
      workOrderId,
    });
  });

  it('REPLACEMENT_REQUEST opens a NORMAL work order', async () => {
    const id = await h.createTool({ name: 'Worn blade' });
    const { workOrderId, eventId } = (await report(id, { kind: 'REPLACEMENT_REQUEST' })).json();
    expect((await t.db.prisma.workOrder.findUnique({ where: { id: workOrderId } }))?.priority).toBe('NORMAL');
    expect((await h.toolEvents(id)).find((e) => e.id === eventId)?.kind).toBe('REPLACEMENT_REQUEST');
    expect((await tool(id)).status).toBe('BROKEN');
    expect((await h.outbox('tool.failure')).find((e) => e.toolId === id)).toMatchObject({
      kind: 'REPLACEMENT_REQUEST',
      newStatus: 'BROKEN',
    });
    const missing = await h.createTool({ name: 'Gone blade' });
    await report(missing, { kind: 'REPLACEMENT_REQUEST', markMissing: true });
    expect((await tool(missing)).status).toBe('MISSING');
    expect((await h.outbox('tool.failure')).filter((e) => e.toolId === missing)).toHaveLength(0);
  });

  it('markMissing sets MISSING, and the tool can no longer be checked out', async () => {
    const id = await h.createTool({ name: 'Lost torch' });
    const res = await report(id, { markMissing: true });
    expect(res.json().workOrderId).toEqual(expect.any(String));
    expect((await tool(id)).status).toBe('MISSING');
    expect((await checkout(id)).statusCode).toBe(409);
    // A FAILURE_REPORT that marks the tool MISSING is not a BROKEN tool: no tool.failure.
    expect((await h.outbox('tool.failure')).filter((e) => e.toolId === id)).toHaveLength(0);
  });

  it('rejects an unknown kind with 422', async () => {
    const id = await h.createTool({ name: 'X' });
    expect((await report(id, { kind: 'CHECK_OUT' })).statusCode).toBe(422);
  });
});
