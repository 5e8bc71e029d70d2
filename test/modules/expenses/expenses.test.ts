import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { expectCreated, makeAsset, makeProject } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let assetId: string;
let foreignExpenseId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  assetId = await makeAsset(t, acme.key, { nickname: 'Truck', assetClass: 'on-road' });
  const theirs = await makeAsset(t, other.key);
  foreignExpenseId = expectCreated(
    await t.api.post('/api/v1/expenses', other.key, {
      assetId: theirs,
      type: 'tolls',
      amount: 3,
      incurredAt: '2026-01-01',
    }),
    'foreign expense',
  ).expenseId;
});
afterAll(() => t.close());

const post = (body: Record<string, unknown>) =>
  t.api.post('/api/v1/expenses', acme.key, {
    assetId,
    type: 'insurance',
    amount: 1250.1,
    incurredAt: '2026-03-01',
    ...body,
  });
const detail = async (id: string) => (await t.api.get(`/api/v1/expenses/${id}`, acme.key)).json().expense;

describe('expenses', () => {
  it('records an expense (201), shows it, and emits expense.created', async () => {
    const res = await post({ note: 'Annual policy' });
    expect(res.statusCode).toBe(201);
    const { expenseId } = res.json();
    expect(await detail(expenseId)).toMatchObject({
      id: expenseId,
      assetId,
      type: 'insurance',
      amount: 1250.1,
      incurredAt: '2026-03-01T00:00:00.000Z',
      note: 'Annual policy',
      projectId: null,
      createdById: acme.userId,
    });
    const event = await t.db.prisma.event.findFirst({ where: { orgId: acme.orgId, type: 'expense.created' } });
    expect(event?.data).toMatchObject({ expenseId, assetId, type: 'insurance', amount: 1250.1 });
  });

  it('validates type, amount and references (422)', async () => {
    expect((await post({ type: 'parking' })).json().fieldErrors).toHaveProperty('type');
    expect((await post({ amount: 1.005 })).json().fieldErrors).toHaveProperty('amount');
    expect((await post({ amount: -1 })).json().fieldErrors).toHaveProperty('amount');
    expect((await post({ incurredAt: 'yesterday' })).json().fieldErrors).toHaveProperty('incurredAt');
    const theirAsset = await makeAsset(t, other.key);
    expect((await post({ assetId: theirAsset })).json().fieldErrors).toHaveProperty('assetId');
    const theirProject = await makeProject(t, other.key);
    expect((await post({ projectId: theirProject })).json().fieldErrors).toHaveProperty('projectId');
    const theirVendor = expectCreated(
      await t.api.post('/api/v1/vendors', other.key, { name: 'Insurer' }),
      'v',
    ).vendorId;
    expect((await post({ vendorId: theirVendor })).json().fieldErrors).toHaveProperty('vendorId');
    const vendor = expectCreated(await t.api.post('/api/v1/vendors', acme.key, { name: 'Insurer' }), 'v').vendorId;
    expect((await post({ vendorId: vendor })).statusCode).toBe(201);
  });

  it('changes and deletes an expense; after DELETE it is 404', async () => {
    const { expenseId } = expectCreated(await post({ type: 'fines', amount: 90 }), 'expense');
    const res = await t.api.patch(`/api/v1/expenses/${expenseId}`, acme.key, { amount: 95.5, note: 'Late fee' });
    expect(res.statusCode).toBe(200);
    expect(await detail(expenseId)).toMatchObject({ amount: 95.5, note: 'Late fee', type: 'fines' });
    expect((await t.api.patch(`/api/v1/expenses/${expenseId}`, acme.key, {})).statusCode).toBe(422);
    expect((await t.api.delete(`/api/v1/expenses/${expenseId}`, acme.key)).statusCode).toBe(200);
    expect((await t.api.get(`/api/v1/expenses/${expenseId}`, acme.key)).statusCode).toBe(404);
  });

  it('lists newest first, filtered by asset, type, project and period, page by page', async () => {
    const truck = await makeAsset(t, acme.key, { nickname: 'Other truck', assetClass: 'on-road' });
    const projectId = await makeProject(t, acme.key);
    const ids: string[] = [];
    for (const [day, type] of [
      ['2026-05-01', 'tolls'],
      ['2026-05-02', 'tires'],
      ['2026-05-03', 'tolls'],
      ['2026-05-04', 'rental'],
    ] as const) {
      ids.push(
        expectCreated(
          await post({ assetId: truck, incurredAt: day, type, projectId: type === 'tolls' ? projectId : null }),
          'e',
        ).expenseId,
      );
    }
    const q = (s: string) => t.api.get(`/api/v1/expenses?assetId=${truck}&${s}`, acme.key).then((r) => r.json());
    const first = await q('limit=3');
    expect(first.expenses.map((e: { id: string }) => e.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect((await q(`limit=3&cursor=${first.nextCursor}`)).expenses.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect((await q('type=tolls')).expenses.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[0]]);
    expect((await q(`projectId=${projectId}`)).expenses).toHaveLength(2);
    expect((await q('since=2026-05-02&until=2026-05-04')).expenses.map((e: { id: string }) => e.id)).toEqual([
      ids[2],
      ids[1],
    ]);
  });
});

securitySuite('expenses', () => ({ t, tenant: acme }), [
  { label: 'GET /expenses', method: 'GET', path: () => '/api/v1/expenses', scope: 'expenses:read' },
  { label: 'POST /expenses', method: 'POST', path: () => '/api/v1/expenses', scope: 'expenses:write' },
  {
    label: 'GET /expenses/:id',
    method: 'GET',
    path: () => `/api/v1/expenses/${foreignExpenseId}`,
    scope: 'expenses:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /expenses/:id',
    method: 'PATCH',
    path: () => `/api/v1/expenses/${foreignExpenseId}`,
    scope: 'expenses:write',
    body: { amount: 1 },
    crossTenant: true,
  },
  {
    label: 'DELETE /expenses/:id',
    method: 'DELETE',
    path: () => `/api/v1/expenses/${foreignExpenseId}`,
    scope: 'expenses:write',
    crossTenant: true,
  },
]);
