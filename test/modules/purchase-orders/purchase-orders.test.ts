import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeYard } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import {
  makeOrderPart,
  makePurchaseOrder,
  makeVendor,
  movePurchaseOrder,
  orderDetail,
} from '../../helpers/app/purchasing.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let vendorId: string;
let yardId: string;
let partId: string;
let foreignOrderId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  vendorId = await makeVendor(t, acme.key, { name: 'Filters Inc' });
  yardId = await makeYard(t, acme.key);
  partId = await makeOrderPart(t, acme.key);
  foreignOrderId = (await makePurchaseOrder(t, other.key, {})).purchaseOrderId;
});
afterAll(() => t.close());

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/purchase-orders', key, body);
const complete = () => ({ vendorId, yardId, lines: [{ partId, quantity: 2, unitCost: 10.5 }] });
const events = (type: string, orgId = acme.orgId) =>
  t.db.prisma.event.findMany({ where: { orgId, type }, orderBy: { createdAt: 'asc' } });

describe('POST /purchase-orders', () => {
  it('creates a numbered DRAFT; the detail carries lines, totals and the currency', async () => {
    const org = await t.tenant('Numbers');
    const v = await makeVendor(t, org.key);
    const y = await makeYard(t, org.key);
    const p1 = await makeOrderPart(t, org.key);
    const p2 = await makeOrderPart(t, org.key);
    const res = await create(
      {
        vendorId: v,
        yardId: y,
        lines: [
          { partId: p1, quantity: 3, unitCost: 0.3335 },
          { partId: p2, quantity: 2.5, unitCost: 84.4 },
        ],
        shippingCost: 0.1,
        taxTotal: 0.2,
        notes: 'Rush',
      },
      org.key,
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ ok: true, purchaseOrderId: expect.any(String), number: 1, status: 'DRAFT' });
    expect((await create({}, org.key)).json().number).toBe(2);
    const body = await orderDetail(t, org.key, res.json().purchaseOrderId);
    expect(body.currency).toBe('USD');
    expect(body.purchaseOrder).toMatchObject({
      number: 1,
      status: 'DRAFT',
      vendorId: v,
      yardId: y,
      subtotal: 212,
      shippingCost: 0.1,
      taxTotal: 0.2,
      total: 212.3,
      notes: 'Rush',
      createdById: org.userId,
    });
    expect(body.purchaseOrder.lines).toEqual([
      { id: expect.any(String), partId: p1, quantity: 3, unitCost: 0.3335, total: 1, received: 0 },
      { id: expect.any(String), partId: p2, quantity: 2.5, unitCost: 84.4, total: 211, received: 0 },
    ]);
  });

  it('checks the vendor, yard and parts belong to the organisation and are in use', async () => {
    const archivedVendor = await makeVendor(t, acme.key);
    await t.api.delete(`/api/v1/vendors/${archivedVendor}`, acme.key);
    const archivedPart = await makeOrderPart(t, acme.key, { archived: true });
    const foreignVendor = await makeVendor(t, other.key);
    const foreignYard = await makeYard(t, other.key);
    const foreignPart = await makeOrderPart(t, other.key);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ vendorId: foreignVendor }, 'vendorId', /no vendor/],
      [{ vendorId: archivedVendor }, 'vendorId', /archived/],
      [{ yardId: foreignYard }, 'yardId', /no yard/],
      [{ lines: [{ partId: foreignPart, quantity: 1, unitCost: 1 }] }, 'lines.0.partId', /no part/],
      [{ lines: [{ partId: archivedPart, quantity: 1, unitCost: 1 }] }, 'lines.0.partId', /archived/],
      [{ lines: [{ partId, quantity: 0, unitCost: 1 }] }, 'lines.0.quantity', /more than 0/],
      [{ lines: [{ partId, quantity: 1, unitCost: 1.00001 }] }, 'lines.0.unitCost', /4 decimals/],
      [{ shippingCost: 1.005 }, 'shippingCost', /2 decimals/],
    ];
    for (const [body, field, message] of cases) {
      const res = await create(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().fieldErrors[field], JSON.stringify(body)).toMatch(message);
    }
  });
});

describe('GET /purchase-orders', () => {
  it('lists newest first, filters by status and vendor, page by page', async () => {
    const org = await t.tenant('Lister');
    const v1 = await makeVendor(t, org.key);
    const v2 = await makeVendor(t, org.key);
    const y = await makeYard(t, org.key);
    const p = await makeOrderPart(t, org.key);
    const ids: string[] = [];
    for (const v of [v1, v2, v1, v2, v1])
      ids.push(
        (
          await makePurchaseOrder(t, org.key, {
            vendorId: v,
            yardId: y,
            lines: [{ partId: p, quantity: 1, unitCost: 1 }],
          })
        ).purchaseOrderId,
      );
    await movePurchaseOrder(t, org.key, ids[0], 'submit');
    const list = async (query: string) => {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await t.api.get(
          `/api/v1/purchase-orders?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`,
          org.key,
        );
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().currency).toBe('USD');
        seen.push(...res.json().purchaseOrders.map((o: { number: number }) => o.number));
        cursor = res.json().nextCursor;
      } while (cursor);
      return seen;
    };
    expect(await list('')).toEqual([5, 4, 3, 2, 1]);
    expect(await list(`&vendorId=${v1}`)).toEqual([5, 3, 1]);
    expect(await list('&status=SUBMITTED')).toEqual([1]);
    expect(await list('&status=DRAFT,submitted')).toEqual([5, 4, 3, 2, 1]);
    expect(await list(`&status=DRAFT&vendorId=${v2}`)).toEqual([4, 2]);
  });
});

describe('PATCH /purchase-orders/:id', () => {
  it('changes a DRAFT: fields, and lines replaced as a whole with the subtotal', async () => {
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, complete());
    const res = await t.api.patch(`/api/v1/purchase-orders/${id}`, acme.key, {
      yardId: null,
      notes: 'Call first',
      lines: [{ partId, quantity: 1.5, unitCost: 3 }],
      taxTotal: 1,
    });
    expect(res.statusCode, res.body).toBe(200);
    const { purchaseOrder } = await orderDetail(t, acme.key, id);
    expect(purchaseOrder).toMatchObject({ yardId: null, notes: 'Call first', subtotal: 4.5, taxTotal: 1, total: 5.5 });
    expect(purchaseOrder.lines).toMatchObject([{ partId, quantity: 1.5, unitCost: 3, total: 4.5 }]);
  });

  it('refuses any change once submitted with 409 invalid_status_transition; an empty patch is 422', async () => {
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, complete());
    expect((await t.api.patch(`/api/v1/purchase-orders/${id}`, acme.key, {})).statusCode).toBe(422);
    await movePurchaseOrder(t, acme.key, id, 'submit');
    const res = await t.api.patch(`/api/v1/purchase-orders/${id}`, acme.key, { notes: 'late' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('invalid_status_transition');
  });
});

describe('status moves', () => {
  it('DRAFT -> SUBMITTED -> APPROVED with their events; a refused move changes nothing', async () => {
    const { purchaseOrderId: id, number } = await makePurchaseOrder(t, acme.key, complete());
    const approveEarly = await t.api.post(`/api/v1/purchase-orders/${id}/approve`, acme.key);
    expect(approveEarly.statusCode).toBe(409);
    expect(approveEarly.json().error).toBe('invalid_status_transition');
    expect(await movePurchaseOrder(t, acme.key, id, 'submit')).toEqual({
      ok: true,
      purchaseOrderId: id,
      number,
      status: 'SUBMITTED',
    });
    expect((await t.api.post(`/api/v1/purchase-orders/${id}/submit`, acme.key)).statusCode).toBe(409);
    expect((await movePurchaseOrder(t, acme.key, id, 'approve')).status).toBe('APPROVED');
    const { purchaseOrder } = await orderDetail(t, acme.key, id);
    expect(purchaseOrder).toMatchObject({ status: 'APPROVED', approvedById: acme.userId });
    expect(purchaseOrder.submittedAt).toEqual(expect.any(String));
    const submitted = (await events('purchase_order.submitted')).filter((e) => (e.data as any).purchaseOrderId === id);
    const approved = (await events('purchase_order.approved')).filter((e) => (e.data as any).purchaseOrderId === id);
    expect(submitted.map((e) => e.data)).toEqual([
      expect.objectContaining({ number, status: 'SUBMITTED', vendorId, yardId, total: 21, currency: 'USD' }),
    ]);
    expect(approved.map((e) => e.data)).toEqual([
      expect.objectContaining({ number, status: 'APPROVED', actorId: acme.userId }),
    ]);
  });

  it('submitting needs a vendor, a yard and a line (422 naming each)', async () => {
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, {});
    const res = await t.api.post(`/api/v1/purchase-orders/${id}/submit`, acme.key);
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['lines', 'vendorId', 'yardId']);
    expect((await orderDetail(t, acme.key, id)).purchaseOrder.status).toBe('DRAFT');
  });

  it('refuses to submit a draft whose vendor was archived since (422 on vendorId)', async () => {
    const v = await makeVendor(t, acme.key);
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, { ...complete(), vendorId: v });
    await t.api.delete(`/api/v1/vendors/${v}`, acme.key);
    const res = await t.api.post(`/api/v1/purchase-orders/${id}/submit`, acme.key);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({ vendorId: 'this vendor is archived' });
  });

  it.each([
    ['DRAFT', [] as string[], 'cancel', 'CANCELLED'],
    ['SUBMITTED', ['submit'], 'cancel', 'CANCELLED'],
    ['APPROVED', ['submit', 'approve'], 'cancel', 'CANCELLED'],
    ['SUBMITTED', ['submit'], 'reject', 'REJECTED'],
  ])('%s + %s', async (_from, path, action, to) => {
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, complete());
    for (const step of path) await movePurchaseOrder(t, acme.key, id, step);
    expect((await movePurchaseOrder(t, acme.key, id, action)).status).toBe(to);
  });

  it.each([
    ['REJECTED', ['submit', 'reject']],
    ['CANCELLED', ['cancel']],
  ])('%s is final: every move is 409', async (_status, path) => {
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, complete());
    for (const step of path) await movePurchaseOrder(t, acme.key, id, step);
    for (const action of ['submit', 'approve', 'reject', 'cancel', 'close']) {
      const res = await t.api.post(`/api/v1/purchase-orders/${id}/${action}`, acme.key);
      expect(res.statusCode, action).toBe(409);
    }
  });

  it('approve and reject need purchasing:approve, which purchasing:write does not give', async () => {
    const { purchaseOrderId: id } = await makePurchaseOrder(t, acme.key, complete());
    const { key } = await acme.newKey({ scopes: 'purchasing:read,purchasing:write' });
    await movePurchaseOrder(t, key, id, 'submit');
    for (const action of ['approve', 'reject']) {
      const res = await t.api.post(`/api/v1/purchase-orders/${id}/${action}`, key);
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('missing_scope:purchasing:approve');
    }
  });
});

describe('archiving a part on open orders', () => {
  it('leaves them going (submitted, approved, received); a new order cannot name it', async () => {
    const p = await makeOrderPart(t, acme.key);
    const line = { partId: p, quantity: 2, unitCost: 3 };
    const { purchaseOrderId: draft } = await makePurchaseOrder(t, acme.key, { ...complete(), lines: [line] });
    const { purchaseOrderId: approved } = await makePurchaseOrder(t, acme.key, { ...complete(), lines: [line] });
    await movePurchaseOrder(t, acme.key, approved, 'submit');
    await movePurchaseOrder(t, acme.key, approved, 'approve');

    expect((await t.api.delete(`/api/v1/parts/${p}`, acme.key)).statusCode).toBe(200);

    expect((await movePurchaseOrder(t, acme.key, draft, 'submit')).status).toBe('SUBMITTED');
    const lineId = (await orderDetail(t, acme.key, approved)).purchaseOrder.lines[0].id;
    const receipt = await t.api.post(`/api/v1/purchase-orders/${approved}/receipts`, acme.key, {
      lines: [{ lineId, quantity: 2 }],
    });
    expect(receipt.statusCode, receipt.body).toBe(201);
    expect(receipt.json().status).toBe('RECEIVED');
    const onHand = (await t.api.get(`/api/v1/parts/${p}`, acme.key)).json().part;
    expect(onHand).toMatchObject({ onHand: 2, value: 6, archivedAt: expect.any(String) });

    const refused = await create({ ...complete(), lines: [line] });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().fieldErrors['lines.0.partId']).toMatch(/archived/);
  });
});

const idRoute = (label: string, method: 'GET' | 'POST' | 'PATCH', suffix: string, scope: any, body?: unknown) => ({
  label,
  method,
  path: () => `/api/v1/purchase-orders/${foreignOrderId}${suffix}`,
  scope,
  body,
  crossTenant: true,
});

securitySuite('purchase orders', () => ({ t, tenant: acme }), [
  { label: 'GET /purchase-orders', method: 'GET', path: () => '/api/v1/purchase-orders', scope: 'purchasing:read' },
  { label: 'POST /purchase-orders', method: 'POST', path: () => '/api/v1/purchase-orders', scope: 'purchasing:write' },
  idRoute('GET /purchase-orders/:id', 'GET', '', 'purchasing:read'),
  idRoute('PATCH /purchase-orders/:id', 'PATCH', '', 'purchasing:write', { notes: 'x' }),
  idRoute('POST /purchase-orders/:id/submit', 'POST', '/submit', 'purchasing:write'),
  idRoute('POST /purchase-orders/:id/approve', 'POST', '/approve', 'purchasing:approve'),
  idRoute('POST /purchase-orders/:id/reject', 'POST', '/reject', 'purchasing:approve'),
  idRoute('POST /purchase-orders/:id/cancel', 'POST', '/cancel', 'purchasing:write'),
  idRoute('POST /purchase-orders/:id/close', 'POST', '/close', 'purchasing:write'),
  idRoute('POST /purchase-orders/:id/receipts', 'POST', '/receipts', 'purchasing:write', {
    lines: [{ lineId: 'x', quantity: 1 }],
  }),
]);
