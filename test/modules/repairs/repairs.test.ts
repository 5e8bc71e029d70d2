import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeRepair, makeWorkOrder } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let assetId: string;
let foreignAssetId: string;
let foreignRepairId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  assetId = await makeAsset(t, acme.key, { nickname: 'Excavator' });
  foreignAssetId = await makeAsset(t, other.key, { nickname: 'Theirs' });
  foreignRepairId = await makeRepair(t, other.key, { assetId: foreignAssetId, cost: 10 });
  await t.deps.background.idle();
});
afterAll(() => t.close());

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/repairs', key, body);
const repairDetail = async (id: string) => (await t.api.get(`/api/v1/repairs/${id}`, acme.key)).json().repair;
const workOrder = async (id: string) => (await t.api.get(`/api/v1/work-orders/${id}`, acme.key)).json().workOrder;
const completions = async (workOrderId: string) =>
  (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'workorder.completed' } })).filter(
    (e) => (e.data as { workOrderId: string }).workOrderId === workOrderId,
  );

describe('POST /repairs', () => {
  it('creates an asset repair (201, repairId) and shows the full record with meta in the detail', async () => {
    const res = await create({ assetId, laborHours: 2, cost: 0, parts: ' Filter ', notes: 'Changed filter' });
    expect(res.statusCode).toBe(201);
    const { repairId } = res.json();
    expect(await repairDetail(repairId)).toEqual({
      id: repairId,
      assetId,
      workOrderId: null,
      projectId: null,
      laborHours: 2,
      cost: 0,
      parts: 'Filter',
      notes: 'Changed filter',
      createdById: acme.userId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      meta: {},
    });
  });

  it('needs assetId or workOrderId (422 naming both fields)', async () => {
    const res = await create({ cost: 10 });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['assetId', 'workOrderId']);
  });

  it('rejects negative numbers and an asset or work order of another organisation with 422', async () => {
    expect((await create({ assetId, cost: -5 })).json().fieldErrors).toHaveProperty('cost');
    const foreignAsset = await create({ assetId: foreignAssetId });
    expect(foreignAsset.statusCode).toBe(422);
    expect(foreignAsset.json().fieldErrors).toHaveProperty('assetId');
    const theirOrder = await makeWorkOrder(t, other.key, { title: 'Theirs' });
    const foreignOrder = await create({ workOrderId: theirOrder });
    expect(foreignOrder.statusCode).toBe(422);
    expect(foreignOrder.json().fieldErrors).toHaveProperty('workOrderId');
    expect((await t.db.prisma.workOrder.findUniqueOrThrow({ where: { id: theirOrder } })).status).toBe('OPEN');
  });

  it('takes asset and project from the work order, marks it DONE and emits workorder.completed once with totals', async () => {
    const project = await t.db.prisma.project.create({ data: { orgId: acme.orgId, name: 'Quarry' } });
    const id = await makeWorkOrder(t, acme.key, { assetId, projectId: project.id, status: 'IN_PROGRESS' });
    const first = await create({ workOrderId: id, laborHours: 3, cost: 250 });
    expect(first.statusCode).toBe(201);
    expect(await repairDetail(first.json().repairId)).toMatchObject({
      assetId,
      projectId: project.id,
      workOrderId: id,
    });
    const wo = await workOrder(id);
    expect(wo).toMatchObject({ status: 'DONE', repairSummary: { count: 1, totalLaborHours: 3, totalCost: 250 } });
    expect(wo.completedAt).not.toBeNull();
    // A late repair on a DONE order is logged but does not complete it again.
    expect((await create({ workOrderId: id, laborHours: 1, cost: 40 })).statusCode).toBe(201);
    const events = await completions(id);
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({
      workOrderId: id,
      number: wo.number,
      totalLaborHours: 3,
      totalCost: 250,
      completedAt: wo.completedAt,
      projectId: project.id,
    });
  });

  it("refuses an asset that contradicts the work order's asset", async () => {
    const id = await makeWorkOrder(t, acme.key, { assetId });
    const res = await create({ workOrderId: id, assetId: await makeAsset(t, acme.key, { nickname: 'Other machine' }) });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('assetId');
    expect((await workOrder(id)).status).toBe('OPEN');
  });

  it('a repair marks even a CANCELED work order DONE (spec: POST /repairs with workOrderId marks it DONE)', async () => {
    const id = await makeWorkOrder(t, acme.key);
    await t.api.patch(`/api/v1/work-orders/${id}`, acme.key, { status: 'CANCELED' });
    const res = await create({ workOrderId: id, cost: 10 });
    expect(res.statusCode).toBe(201);
    expect(await t.db.prisma.workOrder.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'DONE' });
    expect(await t.db.prisma.repair.count({ where: { workOrderId: id } })).toBe(1);
  });

  it('closing a flagged work order with a repair resolves the flag (flag.resolved) in the same transaction', async () => {
    const flag = await t.db.prisma.flag.create({
      data: { orgId: acme.orgId, assetId, severity: 'RED', raisedById: acme.userId },
    });
    const id = await makeWorkOrder(t, acme.key, { flagId: flag.id });
    expect((await create({ workOrderId: id, cost: 90 })).statusCode).toBe(201);
    const resolved = await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flag.id } });
    expect(resolved).toMatchObject({ status: 'RESOLVED', resolvedById: acme.userId });
    expect(resolved.resolutionNote).toContain('work order #');
    const events = (await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'flag.resolved' } })).filter(
      (e) => (e.data as { flagId: string }).flagId === flag.id,
    );
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ workOrderId: id, assetId });
  });

  it('a repair logged on an order closed earlier by PATCH resolves its still-open flag', async () => {
    const flag = await t.db.prisma.flag.create({
      data: { orgId: acme.orgId, assetId, severity: 'YELLOW', raisedById: acme.userId },
    });
    const id = await makeWorkOrder(t, acme.key, { flagId: flag.id });
    await t.api.patch(`/api/v1/work-orders/${id}`, acme.key, { status: 'DONE' });
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flag.id } })).status).toBe('OPEN');
    await create({ workOrderId: id, cost: 5 });
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: flag.id } })).status).toBe('RESOLVED');
    expect(await completions(id)).toHaveLength(1);
  });

  it('completes once when several repairs for the same open order race', async () => {
    const id = await makeWorkOrder(t, acme.key, { assetId });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => create({ workOrderId: id, cost: 1, laborHours: 1 })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(5).fill(201));
    expect(await completions(id)).toHaveLength(1);
  });
});

describe('cost anomaly check', () => {
  it('runs in the background after the response, never inline', async () => {
    const machine = await makeAsset(t, acme.key, { nickname: 'Deferred' });
    const spy = vi.spyOn(t.deps.background, 'run').mockImplementation(() => {});
    try {
      const res = await create({ assetId: machine, cost: 100 });
      expect(res.statusCode).toBe(201);
      expect(spy).toHaveBeenCalledWith(
        'repair-cost-anomaly',
        expect.objectContaining({ repairId: res.json().repairId }),
        expect.any(Function),
      );
      expect((await repairDetail(res.json().repairId)).meta).toEqual({});
    } finally {
      spy.mockRestore();
    }
  });

  it('records NORMAL, ANOMALOUS (> 3x median of prior costs) and INSUFFICIENT_HISTORY verdicts in meta', async () => {
    const machine = await makeAsset(t, acme.key, { nickname: 'Grader' });
    const ids: string[] = [];
    for (const cost of [100, 120, 110]) {
      ids.push((await create({ assetId: machine, cost })).json().repairId);
      await t.deps.background.idle();
    }
    expect((await repairDetail(ids[0])).meta.costAnomaly).toMatchObject({
      verdict: 'INSUFFICIENT_HISTORY',
      priorRepairCount: 0,
      medianPriorCost: null,
    });
    expect((await repairDetail(ids[2])).meta.costAnomaly).toMatchObject({
      verdict: 'INSUFFICIENT_HISTORY',
      priorRepairCount: 2,
    });

    const normal = (await create({ assetId: machine, cost: 330 })).json().repairId;
    await t.deps.background.idle();
    expect((await repairDetail(normal)).meta.costAnomaly).toMatchObject({
      verdict: 'NORMAL',
      priorRepairCount: 3,
      medianPriorCost: 110,
      ratio: 3,
    });

    const spike = (await create({ assetId: machine, cost: 1000 })).json().repairId;
    await t.deps.background.idle();
    const verdict = (await repairDetail(spike)).meta.costAnomaly;
    expect(verdict).toMatchObject({ verdict: 'ANOMALOUS', cost: 1000, priorRepairCount: 4, medianPriorCost: 115 });
    expect(Date.parse(verdict.checkedAt)).not.toBeNaN();
  });

  it('skips repairs without an asset or without a positive cost', async () => {
    const spy = vi.spyOn(t.deps.background, 'run');
    try {
      await create({ assetId, cost: 0 });
      await create({ assetId });
      await create({ workOrderId: await makeWorkOrder(t, acme.key), cost: 500 });
      expect(spy.mock.calls.filter((c) => c[0] === 'repair-cost-anomaly')).toHaveLength(0);
    } finally {
      spy.mockRestore();
    }
  });

  it("ignores other assets' history", async () => {
    const a = await makeAsset(t, acme.key, { nickname: 'A' });
    const b = await makeAsset(t, acme.key, { nickname: 'B' });
    for (const cost of [10, 10, 10]) await create({ assetId: a, cost });
    const id = (await create({ assetId: b, cost: 1000 })).json().repairId;
    await t.deps.background.idle();
    expect((await repairDetail(id)).meta.costAnomaly.verdict).toBe('INSUFFICIENT_HISTORY');
  });
});

describe('GET /repairs', () => {
  it('lists newest first without meta, filters by asset, project, work order and since, and pages with the cursor', async () => {
    const tenant = await t.tenant('Lists');
    const machine = await makeAsset(t, tenant.key, { nickname: 'Lister' });
    const project = await t.db.prisma.project.create({ data: { orgId: tenant.orgId, name: 'Road' } });
    const wo = await makeWorkOrder(t, tenant.key, { title: 'x', projectId: project.id });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await makeRepair(t, tenant.key, { assetId: machine, cost: i + 1 }));
    const viaOrder = await makeRepair(t, tenant.key, { workOrderId: wo, cost: 9 });
    await t.deps.background.idle();
    // Distinct, known creation times so the order and the since boundary do not depend on clock resolution.
    const base = Date.parse('2026-10-01T00:00:00.000Z');
    for (const [i, id] of [...ids, viaOrder].entries()) {
      await t.db.prisma.repair.update({ where: { id }, data: { createdAt: new Date(base + i * 60_000) } });
    }
    const list = async (query = '') => (await t.api.get(`/api/v1/repairs${query}`, tenant.key)).json();

    const all = await list();
    expect(all.repairs.map((r: { id: string }) => r.id)).toEqual([viaOrder, ...[...ids].reverse()]);
    expect(all.repairs[0]).not.toHaveProperty('meta');
    expect((await list(`?assetId=${machine}`)).repairs.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect((await list(`?projectId=${project.id}`)).repairs.map((r: { id: string }) => r.id)).toEqual([viaOrder]);
    expect((await list(`?workOrderId=${wo}`)).repairs.map((r: { id: string }) => r.id)).toEqual([viaOrder]);

    const pivot = await t.db.prisma.repair.findUniqueOrThrow({ where: { id: ids[3] } });
    const since = (await list(`?since=${encodeURIComponent(pivot.createdAt.toISOString())}`)).repairs.map(
      (r: { id: string }) => r.id,
    );
    expect(since).toEqual([viaOrder, ids[4], ids[3]]);

    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { repairs: { id: string }[]; nextCursor: string | null } = await list(
        `?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      walked.push(...page.repairs.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(walked).toEqual([viaOrder, ...[...ids].reverse()]);
  });

  it('answers 422 for an invalid since', async () => {
    const res = await t.api.get('/api/v1/repairs?since=yesterday', acme.key);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('since');
  });
});

describe('GET /repairs/:id', () => {
  it('answers 404 for an unknown id', async () => {
    expect((await t.api.get('/api/v1/repairs/nope', acme.key)).statusCode).toBe(404);
  });
});

securitySuite('repairs', () => ({ t, tenant: acme }), [
  { label: 'GET /repairs', method: 'GET', path: () => '/api/v1/repairs', scope: 'workorders:read' },
  {
    label: 'POST /repairs',
    method: 'POST',
    path: () => '/api/v1/repairs',
    scope: 'workorders:write',
    body: { assetId: 'x' },
  },
  {
    label: 'GET /repairs/:id',
    method: 'GET',
    path: () => `/api/v1/repairs/${foreignRepairId}`,
    scope: 'workorders:read',
    crossTenant: true,
  },
]);
