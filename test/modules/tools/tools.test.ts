import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { toolHelpers } from '../../helpers/tools/tool-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignToolId: string;
const h = toolHelpers(() => ({ t, acme }));

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignToolId = await h.createTool({ name: 'Their drill' }, other.key);
});
afterAll(() => t.close());

describe('POST /tools', () => {
  it('creates a tool and answers 201 with toolId and an unguessable scanToken', async () => {
    const res = await t.api.post('/api/v1/tools', acme.key, {
      name: ' Impact driver ',
      category: 'Power',
      purchaseCost: 199.5,
      status: 'BROKEN',
    });
    expect(res.statusCode).toBe(201);
    const { toolId, scanToken } = res.json();
    expect(scanToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const tool = (await t.api.get(`/api/v1/tools/${toolId}`, acme.key)).json().tool;
    // status is PATCH only: ignored on create
    expect(tool).toMatchObject({
      name: 'Impact driver',
      category: 'Power',
      status: 'GOOD',
      scanToken,
      isConsumable: false,
    });
  });

  it('rejects a missing name and references of another organisation with 422', async () => {
    const missing = await t.api.post('/api/v1/tools', acme.key, { category: 'x' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().fieldErrors).toEqual({ name: 'is required' });
    const yard = await t.db.prisma.yard.create({ data: { orgId: other.orgId, name: 'Their yard' } });
    const asset = await t.db.prisma.asset.create({
      data: {
        orgId: other.orgId,
        nickname: 'Their truck',
        assetClass: 'ON_ROAD',
        meterType: 'ODOMETER',
        meterUnit: 'mi',
      },
    });
    const res = await t.api.post('/api/v1/tools', acme.key, {
      name: 'X',
      parentKitId: foreignToolId,
      assignedVehicleId: asset.id,
      assignedUserId: other.userId,
      assignedYardId: yard.id,
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual([
      'assignedUserId',
      'assignedVehicleId',
      'assignedYardId',
      'parentKitId',
    ]);
  });

  it('ignores stockLevel on non-consumables', async () => {
    const id = await h.createTool({ name: 'Wrench', stockLevel: 12 });
    expect((await t.api.get(`/api/v1/tools/${id}`, acme.key)).json().tool.stockLevel).toBeNull();
  });

  it('records tool_created as the oldest event (unset segments omitted) and tool.created with the actor', async () => {
    const id = await h.createTool({ name: 'Gloves', category: 'PPE', isConsumable: true, stockLevel: 40 });
    const plain = await h.createTool({ name: 'Plain' });
    expect((await h.toolEvents(id))[0]).toMatchObject({
      kind: 'AUDIT',
      description: 'tool_created: name=Gloves category=PPE consumable=true',
      actorId: acme.userId,
    });
    expect((await h.toolEvents(plain))[0].description).toBe('tool_created: name=Plain');
    const created = (await h.outbox('tool.created')).find((e) => e.toolId === id);
    expect(created).toMatchObject({ name: 'Gloves', category: 'PPE', isConsumable: true, actorId: acme.userId });
    expect(created?.scanToken).toEqual(expect.any(String));
  });
});

describe('POST /tools/batch', () => {
  it('creates valid rows, reports failures with fieldErrors and formError, one tool.created per row with actorId null', async () => {
    const before = (await h.outbox('tool.created')).length;
    const res = await t.api.post('/api/v1/tools/batch', acme.key, {
      entries: [
        { name: 'B1' },
        { category: 'no name' },
        { name: 'B3', parentKitId: foreignToolId },
        { name: 'B4', isConsumable: true },
      ],
    });
    expect(res.statusCode).toBe(200);
    const { results, summary } = res.json();
    expect(summary).toEqual({ received: 4, succeeded: 2, failed: 2 });
    expect(results[0]).toMatchObject({ index: 0, ok: true, toolId: expect.any(String), scanToken: expect.any(String) });
    expect(results[1]).toMatchObject({
      index: 1,
      ok: false,
      error: 'validation_failed',
      fieldErrors: { name: 'is required' },
      formError: 'name is required',
    });
    expect(results[2]).toMatchObject({
      index: 2,
      ok: false,
      fieldErrors: { parentKitId: expect.any(String) },
      formError: expect.stringContaining('parentKitId'),
    });
    const created = (await h.outbox('tool.created')).slice(before);
    expect(created.map((e) => e.toolId).sort()).toEqual([results[0].toolId, results[3].toolId].sort());
    expect(created.every((e) => e.actorId === null)).toBe(true);
    expect((await h.toolEvents(results[0].toolId))[0]).toMatchObject({
      description: 'tool_created: name=B1',
      actorId: null,
    });
  });

  it.each([
    ['invalid_envelope', { items: [] }],
    ['empty_batch', []],
    ['batch_too_large', Array.from({ length: 101 }, (_, i) => ({ name: `T${i}` }))],
  ])('answers 400 %s', async (code, body) => {
    const res = await t.api.post('/api/v1/tools/batch', acme.key, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe(code);
  });

  it('accepts exactly 100 entries', async () => {
    const fresh = await t.tenant('Hundred');
    const res = await t.api.post(
      '/api/v1/tools/batch',
      fresh.key,
      Array.from({ length: 100 }, (_, i) => ({ name: `Bulk ${i}` })),
    );
    expect(res.json().summary).toEqual({ received: 100, succeeded: 100, failed: 0 });
  });
});

describe('GET /tools/:id book value', () => {
  const yearsAgo = (y: number) => new Date(Date.now() - y * 365.25 * 86_400_000).toISOString();

  it('depreciates straight line over 5 years (1 for consumables), clamps usefulLifeYears to 0.25-50, null without date or cost', async () => {
    const drill = await h.createTool({ name: 'Drill', purchaseCost: 1000, purchaseDate: yearsAgo(2) });
    const bv = (q = '') =>
      t.api.get(`/api/v1/tools/${drill}?includeBookValue=true${q}`, acme.key).then((r) => r.json().tool.bookValue);
    expect(await bv()).toMatchObject({ bookValue: 600, depreciationPct: 0.4, usefulLifeYears: 5 });
    expect((await bv()).elapsedYears).toBeCloseTo(2, 3);
    expect(await bv('&usefulLifeYears=4')).toMatchObject({ bookValue: 500, usefulLifeYears: 4 });
    expect(await bv('&usefulLifeYears=1000')).toMatchObject({ usefulLifeYears: 50, bookValue: 960 });
    expect(await bv('&usefulLifeYears=0')).toMatchObject({ usefulLifeYears: 0.25, bookValue: 0, depreciationPct: 1 });
    const tape = await h.createTool({
      name: 'Tape',
      isConsumable: true,
      purchaseCost: 100,
      purchaseDate: yearsAgo(0.5),
    });
    expect(
      (await t.api.get(`/api/v1/tools/${tape}?includeBookValue=true`, acme.key)).json().tool.bookValue,
    ).toMatchObject({ bookValue: 50, usefulLifeYears: 1 });
    const undated = await h.createTool({ name: 'Undated', purchaseCost: 100 });
    expect(
      (await t.api.get(`/api/v1/tools/${undated}?includeBookValue=true`, acme.key)).json().tool.bookValue,
    ).toBeNull();
    expect((await t.api.get(`/api/v1/tools/${drill}`, acme.key)).json().tool).not.toHaveProperty('bookValue');
  });

  it('rejects a non-boolean includeBookValue with 422', async () => {
    const res = await t.api.get(`/api/v1/tools/${foreignToolId}?includeBookValue=maybe`, acme.key);
    expect(res.statusCode).toBe(422);
  });
});

describe('PATCH /tools/:id', () => {
  it('records status_changed only when the status actually changes', async () => {
    const id = await h.createTool({ name: 'Saw' });
    expect((await t.api.patch(`/api/v1/tools/${id}`, acme.key, { status: 'NEEDS_ATTENTION' })).json()).toEqual({
      ok: true,
      toolId: id,
    });
    await t.api.patch(`/api/v1/tools/${id}`, acme.key, { status: 'NEEDS_ATTENTION' });
    const audits = (await h.toolEvents(id)).filter((e) => e.description?.startsWith('status_changed:'));
    expect(audits.map((e) => e.description)).toEqual(['status_changed: from=GOOD to=NEEDS_ATTENTION']);
  });

  it('one ASSIGNMENT event per kind moved and one tool.assignment_changed with every change', async () => {
    const kit = await h.createTool({ name: 'Kit' });
    const yard = await t.db.prisma.yard.create({ data: { orgId: acme.orgId, name: 'Main yard' } });
    const id = await h.createTool({ name: 'Grinder', assignedYardId: yard.id });
    const before = (await h.outbox('tool.assignment_changed')).length;
    const res = await t.api.patch(`/api/v1/tools/${id}`, acme.key, {
      assignedUserId: acme.userId,
      parentKitId: kit,
      assignedYardId: null,
      name: 'Grinder 2',
    });
    expect(res.statusCode).toBe(200);
    const assignment = (await h.toolEvents(id))
      .filter((e) => e.kind === 'ASSIGNMENT')
      .map((e) => e.description)
      .sort();
    expect(assignment).toEqual([
      `assignment_changed: type=kit from=none to=${kit}`,
      `assignment_changed: type=user from=none to=${acme.userId}`,
      `assignment_changed: type=yard from=${yard.id} to=none`,
    ]);
    const events = (await h.outbox('tool.assignment_changed')).slice(before);
    expect(events).toHaveLength(1);
    expect(events[0].changes).toEqual(
      expect.arrayContaining([
        { type: 'user', from: null, to: acme.userId },
        { type: 'kit', from: null, to: kit },
        { type: 'yard', from: yard.id, to: null },
      ]),
    );
    expect(events[0].changes).toHaveLength(3);
    // the same values again: nothing moves, nothing is emitted
    await t.api.patch(`/api/v1/tools/${id}`, acme.key, { assignedUserId: acme.userId, parentKitId: kit });
    expect((await h.outbox('tool.assignment_changed')).length).toBe(before + 1);
  });

  it('rejects foreign references, a kit cycle and an empty patch with 422; unknown fields are ignored', async () => {
    const id = await h.createTool({ name: 'Level' });
    const foreign = await t.api.patch(`/api/v1/tools/${id}`, acme.key, {
      parentKitId: foreignToolId,
      assignedUserId: other.userId,
    });
    expect(foreign.statusCode).toBe(422);
    expect(Object.keys(foreign.json().fieldErrors).sort()).toEqual(['assignedUserId', 'parentKitId']);
    const child = await h.createTool({ name: 'Child', parentKitId: id });
    expect((await t.api.patch(`/api/v1/tools/${id}`, acme.key, { parentKitId: child })).statusCode).toBe(422);
    expect((await t.api.patch(`/api/v1/tools/${id}`, acme.key, { parentKitId: id })).statusCode).toBe(422);
    expect((await t.api.patch(`/api/v1/tools/${id}`, acme.key, { bogus: 1 })).statusCode).toBe(422);
    expect((await t.api.patch(`/api/v1/tools/${id}`, acme.key, { name: '  ' })).statusCode).toBe(422);
  });

  it('null clears fields; stock is dropped when a consumable becomes a plain tool', async () => {
    const id = await h.createTool({ name: 'Tape', isConsumable: true, stockLevel: 9, category: 'Misc' });
    await t.api.patch(`/api/v1/tools/${id}`, acme.key, { category: null, isConsumable: false });
    expect((await t.api.get(`/api/v1/tools/${id}`, acme.key)).json().tool).toMatchObject({
      category: null,
      isConsumable: false,
      stockLevel: null,
    });
  });
});

securitySuite('tools', () => ({ t, tenant: acme }), [
  { label: 'GET /tools', method: 'GET', path: () => '/api/v1/tools', scope: 'tools:read' },
  { label: 'GET /tools csv', method: 'GET', path: () => '/api/v1/tools?format=csv', scope: 'tools:read' },
  { label: 'POST /tools', method: 'POST', path: () => '/api/v1/tools', scope: 'tools:write', body: { name: 'x' } },
  {
    label: 'POST /tools/batch',
    method: 'POST',
    path: () => '/api/v1/tools/batch',
    scope: 'tools:write',
    body: [{ name: 'x' }],
  },
  {
    label: 'GET /tools/:id',
    method: 'GET',
    path: () => `/api/v1/tools/${foreignToolId}`,
    scope: 'tools:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /tools/:id',
    method: 'PATCH',
    path: () => `/api/v1/tools/${foreignToolId}`,
    scope: 'tools:write',
    body: { name: 'x' },
    crossTenant: true,
  },
  {
    label: 'POST /tools/:id/checkout',
    method: 'POST',
    path: () => `/api/v1/tools/${foreignToolId}/checkout`,
    scope: 'tools:write',
    body: {},
    crossTenant: true,
  },
  {
    label: 'POST /tools/:id/checkin',
    method: 'POST',
    path: () => `/api/v1/tools/${foreignToolId}/checkin`,
    scope: 'tools:write',
    body: { condition: 'GOOD' },
    crossTenant: true,
  },
  {
    label: 'POST /tools/:id/report',
    method: 'POST',
    path: () => `/api/v1/tools/${foreignToolId}/report`,
    scope: 'tools:write',
    body: {},
    crossTenant: true,
  },
  {
    label: 'POST /tools/:id/adjust-stock',
    method: 'POST',
    path: () => `/api/v1/tools/${foreignToolId}/adjust-stock`,
    scope: 'tools:write',
    body: { delta: 1 },
    crossTenant: true,
  },
  {
    label: 'POST /tools/:id/mark-serviced',
    method: 'POST',
    path: () => `/api/v1/tools/${foreignToolId}/mark-serviced`,
    scope: 'tools:write',
    body: {},
    crossTenant: true,
  },
  {
    label: 'GET /tools/:id/events',
    method: 'GET',
    path: () => `/api/v1/tools/${foreignToolId}/events`,
    scope: 'tools:read',
    crossTenant: true,
  },
  {
    label: 'GET /tools/:id/utilization',
    method: 'GET',
    path: () => `/api/v1/tools/${foreignToolId}/utilization`,
    scope: 'tools:read',
    crossTenant: true,
  },
  {
    label: 'GET /tools/:id/qr',
    method: 'GET',
    path: () => `/api/v1/tools/${foreignToolId}/qr`,
    scope: 'tools:read',
    crossTenant: true,
  },
]);
