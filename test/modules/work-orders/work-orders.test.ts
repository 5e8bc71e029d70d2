import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset, makeWorkOrder } from '../../helpers/app/factories.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let assetId: string;
let foreignAssetId: string;
let foreignWorkOrderId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  assetId = await makeAsset(t, acme.key, { nickname: 'Dozer' });
  foreignAssetId = await makeAsset(t, other.key, { nickname: 'Theirs', assetClass: 'trailer' });
  foreignWorkOrderId = await makeWorkOrder(t, other.key, { title: 'Their order' });
});
afterAll(() => t.close());

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/work-orders', key, body);
const patch = (id: string, body: unknown, key = acme.key) => t.api.patch(`/api/v1/work-orders/${id}`, key, body);
const detail = async (id: string) => (await t.api.get(`/api/v1/work-orders/${id}`, acme.key)).json().workOrder;
const newOrder = (body: Record<string, unknown> = {}) => makeWorkOrder(t, acme.key, body);
const events = (orgId: string, type: string) =>
  t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });
const eventsFor = async (type: string, workOrderId: string) =>
  (await events(acme.orgId, type)).filter((e) => (e.data as { workOrderId?: string }).workOrderId === workOrderId);
const newFlag = (orgId = acme.orgId, forAsset = assetId, severity: 'RED' | 'YELLOW' = 'RED') =>
  t.db.prisma.flag.create({
    data: { orgId, assetId: forAsset, severity, raisedById: acme.userId, note: 'Hydraulic leak' },
  });

describe('POST /work-orders', () => {
  it('creates with defaults, answers 201 with id and number, and emits workorder.created', async () => {
    const res = await create({
      title: '  Replace hose ',
      assetId,
      estimateLaborHours: 2.5,
      estimateCost: 180,
      dueAt: '2026-12-01',
    });
    expect(res.statusCode).toBe(201);
    const { workOrderId, number } = res.json();
    expect(number).toBeGreaterThan(0);
    expect(await detail(workOrderId)).toMatchObject({
      id: workOrderId,
      number,
      title: 'Replace hose',
      status: 'OPEN',
      priority: 'NORMAL',
      assetId,
      projectId: null,
      flagId: null,
      dueAt: '2026-12-01T00:00:00.000Z',
      estimateLaborHours: 2.5,
      estimateCost: 180,
      createdById: acme.userId,
      completedAt: null,
      repairSummary: { count: 0, totalLaborHours: 0, totalCost: 0 },
    });
    const [created] = await eventsFor('workorder.created', workOrderId);
    expect(created.data).toMatchObject({
      workOrderId,
      number,
      title: 'Replace hose',
      status: 'OPEN',
      priority: 'NORMAL',
      assetId,
    });
  });

  it('rejects a blank title, unknown priority or status and negative estimates with 422', async () => {
    const res = await create({ title: '  ', priority: 'SOON', status: 'FINISHED', estimateCost: -1 });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['estimateCost', 'priority', 'status', 'title']);
  });

  it('titles an untitled order after its number (title is optional in the spec)', async () => {
    const res = await create({});
    expect(res.statusCode).toBe(201);
    expect(await detail(res.json().workOrderId)).toMatchObject({
      title: `Work order #${res.json().number}`,
      status: 'OPEN',
    });
    // The number and this title are made inside the numbering statement: the event carries them too.
    const [created] = await eventsFor('workorder.created', res.json().workOrderId);
    expect(created.data).toMatchObject({ number: res.json().number, title: `Work order #${res.json().number}` });
  });

  it('creates with any given status; created DONE it is completed at once (workorder.completed)', async () => {
    const canceled = await create({ title: 'Not needed', status: 'CANCELED' });
    expect(await detail(canceled.json().workOrderId)).toMatchObject({ status: 'CANCELED', completedAt: null });
    const done = await create({ title: 'Already fixed', status: 'DONE' });
    expect(done.statusCode).toBe(201);
    const id = done.json().workOrderId;
    expect((await detail(id)).completedAt).not.toBeNull();
    const completed = (
      await t.db.prisma.event.findMany({ where: { orgId: acme.orgId, type: 'workorder.completed' } })
    ).filter((e) => (e.data as { workOrderId: string }).workOrderId === id);
    expect(completed).toHaveLength(1);
    expect(completed[0].data).toMatchObject({ totalLaborHours: 0, totalCost: 0 });
  });

  it('rejects references of another organisation with 422 fieldErrors', async () => {
    const flag = await newFlag(other.orgId, foreignAssetId);
    const project = await t.db.prisma.project.create({ data: { orgId: other.orgId, name: 'Their job' } });
    const res = await create({
      title: 'X',
      assetId: foreignAssetId,
      flagId: flag.id,
      projectId: project.id,
      assignedToId: other.userId,
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['assetId', 'assignedToId', 'flagId', 'projectId']);
  });

  it('takes the asset from the linked flag, and refuses a contradicting asset', async () => {
    const flag = await newFlag();
    const id = await newOrder({ flagId: flag.id });
    expect(await detail(id)).toMatchObject({ flagId: flag.id, assetId });
    const otherAsset = (
      await t.api.post('/api/v1/assets', acme.key, { nickname: 'Loader', assetClass: 'off-road' })
    ).json().assetId;
    const res = await create({ title: 'X', flagId: flag.id, assetId: otherAsset });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('assetId');
  });
});

describe('GET /work-orders', () => {
  it('shows the active queue by default, honours status/priority CSV filters and ignores unknown values', async () => {
    const tenant = await t.tenant('Queue');
    const mk = async (title: string, status: string, priority: string) =>
      (
        await create(
          { title, status: status === 'DONE' || status === 'CANCELED' ? 'OPEN' : status, priority },
          tenant.key,
        )
      ).json().workOrderId as string;
    const open = await mk('open', 'OPEN', 'LOW');
    const assigned = await mk('assigned', 'ASSIGNED', 'HIGH');
    const held = await mk('held', 'ON_HOLD', 'NORMAL');
    const done = await mk('done', 'OPEN', 'URGENT');
    const canceled = await mk('canceled', 'OPEN', 'NORMAL');
    expect((await patch(done, { status: 'DONE' }, tenant.key)).statusCode).toBe(200);
    expect((await patch(canceled, { status: 'CANCELED' }, tenant.key)).statusCode).toBe(200);
    const ids = async (query: string) =>
      (await t.api.get(`/api/v1/work-orders${query}`, tenant.key)).json().workOrders.map((w: { id: string }) => w.id);
    expect(await ids('')).toEqual([assigned, held, open]);
    expect(await ids('?status=DONE')).toEqual([done]);
    expect(await ids('?status=done,canceled,BOGUS')).toEqual([done, canceled]);
    expect(await ids('?status=BOGUS')).toEqual([assigned, held, open]);
    expect(await ids('?priority=HIGH,LOW,SOON')).toEqual([assigned, open]);
    expect(await ids('?priority=SOON')).toEqual([assigned, held, open]);
  });

  it('filters by assignedToId', async () => {
    const tenant = await t.tenant('Assigned');
    const mine = (await create({ title: 'mine', assignedToId: tenant.userId, status: 'ASSIGNED' }, tenant.key)).json()
      .workOrderId;
    await create({ title: 'unassigned' }, tenant.key);
    const res = await t.api.get(`/api/v1/work-orders?assignedToId=${tenant.userId}`, tenant.key);
    expect(res.json().workOrders.map((w: { id: string }) => w.id)).toEqual([mine]);
  });

  it('filters by assetId', async () => {
    const tenant = await t.tenant('ByAsset');
    const machine = (
      await t.api.post('/api/v1/assets', tenant.key, { nickname: 'Crane', assetClass: 'off-road' })
    ).json().assetId;
    const onMachine = (await create({ title: 'on machine', assetId: machine }, tenant.key)).json().workOrderId;
    await create({ title: 'elsewhere' }, tenant.key);
    const res = await t.api.get(`/api/v1/work-orders?assetId=${machine}`, tenant.key);
    expect(res.json().workOrders.map((w: { id: string }) => w.id)).toEqual([onMachine]);
  });

  it('rejects a cursor it did not issue with 422', async () => {
    const res = await t.api.get('/api/v1/work-orders?cursor=bm9wZQ', acme.key);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('cursor');
    // Well-formed but holding a date the database cannot store: still the cursor's fault, not a 500.
    const farOff = Buffer.from(JSON.stringify(['HIGH', '+200000-01-01T00:00:00.000Z', AT, 'x'])).toString('base64url');
    const far = await t.api.get(`/api/v1/work-orders?cursor=${farOff}`, acme.key);
    expect(far.statusCode).toBe(422);
    expect(far.json().fieldErrors).toHaveProperty('cursor');
  });
});

const AT = '2026-06-01T00:00:00.000Z';

describe('PATCH /work-orders/:id', () => {
  it('changes only the sent fields and clears nullable fields with null', async () => {
    const id = await newOrder({
      description: 'Leaks',
      assetId,
      estimateCost: 100,
      dueAt: '2026-12-01T08:00:00Z',
      assignedToId: acme.userId,
    });
    expect((await patch(id, { title: 'Renamed', estimateCost: null, dueAt: null })).json()).toEqual({
      ok: true,
      workOrderId: id,
    });
    expect(await detail(id)).toMatchObject({
      title: 'Renamed',
      description: 'Leaks',
      assetId,
      estimateCost: null,
      dueAt: null,
      assignedToId: acme.userId,
      status: 'OPEN',
    });
  });

  it('silently drops unknown status and priority values while applying the rest', async () => {
    const id = await newOrder({ priority: 'HIGH' });
    const res = await patch(id, { status: 'FINISHED', priority: 'ASAP', description: 'kept' });
    expect(res.statusCode).toBe(200);
    expect(await detail(id)).toMatchObject({ status: 'OPEN', priority: 'HIGH', description: 'kept' });
    expect((await patch(id, { status: 'nope' })).statusCode).toBe(200);
    expect((await patch(id, { status: null, priority: null })).statusCode).toBe(200);
    expect(await detail(id)).toMatchObject({ status: 'OPEN', priority: 'HIGH' });
    expect((await patch(id, { priority: 'urgent' })).statusCode).toBe(200);
    expect((await detail(id)).priority).toBe('URGENT');
  });

  it('answers 422 for an empty body and for a blank title', async () => {
    const id = await newOrder();
    expect((await patch(id, {})).statusCode).toBe(422);
    const blank = await patch(id, { title: '  ' });
    expect(blank.statusCode).toBe(422);
    expect(blank.json().fieldErrors).toHaveProperty('title');
  });

  it('answers 422 fieldErrors for an asset, project, assignee or flag of another organisation, changing nothing', async () => {
    const id = await newOrder({ assetId });
    const project = await t.db.prisma.project.create({ data: { orgId: other.orgId, name: 'Their job' } });
    const flag = await newFlag(other.orgId, foreignAssetId);
    const res = await patch(id, {
      assetId: foreignAssetId,
      projectId: project.id,
      assignedToId: other.userId,
      flagId: flag.id,
      title: 'No',
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['assetId', 'assignedToId', 'flagId', 'projectId']);
    expect(await detail(id)).toMatchObject({ assetId, title: 'Fix it', projectId: null });
  });

  it('linking a flag adopts its asset when the order has none, and refuses a contradicting asset', async () => {
    const flag = await newFlag();
    const id = await newOrder();
    expect((await patch(id, { flagId: flag.id })).statusCode).toBe(200);
    expect(await detail(id)).toMatchObject({ flagId: flag.id, assetId });
    const otherAsset = (
      await t.api.post('/api/v1/assets', acme.key, { nickname: 'Roller', assetClass: 'off-road' })
    ).json().assetId;
    const res = await patch(id, { assetId: otherAsset });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty('assetId');
  });

  it('accepts an own project and assignee', async () => {
    const id = await newOrder();
    const project = await t.db.prisma.project.create({ data: { orgId: acme.orgId, name: 'Our job' } });
    expect((await patch(id, { projectId: project.id, assignedToId: acme.userId, status: 'ASSIGNED' })).statusCode).toBe(
      200,
    );
    expect(await detail(id)).toMatchObject({ projectId: project.id, assignedToId: acme.userId, status: 'ASSIGNED' });
  });

  it('moves freely between active statuses and to CANCELED; CANCELED re-opens but cannot jump to DONE', async () => {
    const id = await newOrder();
    for (const status of ['ASSIGNED', 'IN_PROGRESS', 'ON_HOLD', 'OPEN', 'IN_PROGRESS', 'CANCELED']) {
      expect((await patch(id, { status })).statusCode, status).toBe(200);
      expect((await detail(id)).status).toBe(status);
    }
    const jump = await patch(id, { status: 'DONE' });
    expect(jump.statusCode).toBe(409);
    expect(jump.json()).toMatchObject({ ok: false, error: 'invalid_status_transition' });
    expect((await patch(id, { status: 'CANCELED' })).statusCode).toBe(200);
    expect((await patch(id, { status: 'ASSIGNED' })).statusCode).toBe(200);
    expect((await detail(id)).status).toBe('ASSIGNED');
  });

  it('makes DONE terminal: 409 for any other status, same status is a no-op, other fields stay editable', async () => {
    const id = await newOrder();
    expect((await patch(id, { status: 'DONE' })).statusCode).toBe(200);
    for (const status of ['OPEN', 'IN_PROGRESS', 'CANCELED']) {
      const res = await patch(id, { status });
      expect(res.statusCode, status).toBe(409);
      expect(res.json().error).toBe('invalid_status_transition');
    }
    expect((await patch(id, { status: 'DONE', title: 'Typo fixed' })).statusCode).toBe(200);
    expect(await detail(id)).toMatchObject({ status: 'DONE', title: 'Typo fixed' });
    expect(await eventsFor('workorder.completed', id)).toHaveLength(1);
  });

  it('PATCH to DONE sets completedAt and emits workorder.completed with repair totals', async () => {
    const id = await newOrder({ assetId });
    await t.db.prisma.repair.createMany({
      data: [
        { orgId: acme.orgId, assetId, workOrderId: id, laborHours: 1.5, cost: 100 },
        { orgId: acme.orgId, assetId, workOrderId: id, laborHours: 2, cost: 50.25 },
      ],
    });
    expect((await patch(id, { status: 'DONE' })).statusCode).toBe(200);
    const wo = await detail(id);
    expect(wo.completedAt).not.toBeNull();
    expect(wo.repairSummary).toEqual({ count: 2, totalLaborHours: 3.5, totalCost: 150.25 });
    const [completed] = await eventsFor('workorder.completed', id);
    expect(completed.data).toMatchObject({
      workOrderId: id,
      number: wo.number,
      totalLaborHours: 3.5,
      totalCost: 150.25,
      completedAt: wo.completedAt,
      completedById: acme.userId,
    });
  });

  it('PATCH to DONE resolves the linked flag only when the order has a repair log', async () => {
    const withoutRepair = await newFlag();
    const a = await newOrder({ flagId: withoutRepair.id });
    expect((await patch(a, { status: 'DONE' })).statusCode).toBe(200);
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: withoutRepair.id } })).status).toBe('OPEN');

    const withRepair = await newFlag();
    const b = await newOrder({ flagId: withRepair.id });
    await t.db.prisma.repair.create({ data: { orgId: acme.orgId, assetId, workOrderId: b, cost: 10 } });
    expect((await patch(b, { status: 'DONE' })).statusCode).toBe(200);
    expect((await t.db.prisma.flag.findUniqueOrThrow({ where: { id: withRepair.id } })).status).toBe('RESOLVED');
    const resolved = (await events(acme.orgId, 'flag.resolved')).filter(
      (e) => (e.data as { flagId: string }).flagId === withRepair.id,
    );
    expect(resolved).toHaveLength(1);
    expect(resolved[0].data).toMatchObject({ workOrderId: b, severity: 'RED' });
  });

  it('completes once when two PATCHes to DONE race', async () => {
    const id = await newOrder();
    const results = await Promise.all([
      patch(id, { status: 'DONE' }),
      patch(id, { status: 'DONE' }),
      patch(id, { status: 'DONE' }),
    ]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(await eventsFor('workorder.completed', id)).toHaveLength(1);
  });
});

describe('GET /work-orders/:id', () => {
  it('answers 404 for an unknown id', async () => {
    const res = await t.api.get('/api/v1/work-orders/nope', acme.key);
    expect(res.statusCode).toBe(404);
  });
});

securitySuite('work orders', () => ({ t, tenant: acme }), [
  { label: 'GET /work-orders', method: 'GET', path: () => '/api/v1/work-orders', scope: 'workorders:read' },
  {
    label: 'POST /work-orders',
    method: 'POST',
    path: () => '/api/v1/work-orders',
    scope: 'workorders:write',
    body: { title: 'x' },
  },
  {
    label: 'GET /work-orders/:id',
    method: 'GET',
    path: () => `/api/v1/work-orders/${foreignWorkOrderId}`,
    scope: 'workorders:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /work-orders/:id',
    method: 'PATCH',
    path: () => `/api/v1/work-orders/${foreignWorkOrderId}`,
    scope: 'workorders:write',
    body: { title: 'Stolen' },
    crossTenant: true,
  },
]);
