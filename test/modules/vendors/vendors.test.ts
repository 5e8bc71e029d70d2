import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { expectCreated } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignVendorId: string;

const create = (body: unknown, key = acme.key) => t.api.post('/api/v1/vendors', key, body);
const makeVendor = async (body: Record<string, unknown>, key = acme.key) =>
  expectCreated<{ vendorId: string }>(await create(body, key), 'POST /vendors').vendorId;
const detail = async (id: string) => (await t.api.get(`/api/v1/vendors/${id}`, acme.key)).json().vendor;
const names = async (query = '') => {
  const res = await t.api.get(`/api/v1/vendors${query}`, acme.key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().vendors.map((v: { name: string }) => v.name);
};

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignVendorId = await makeVendor({ name: 'Foreign Parts' }, other.key);
});
afterAll(() => t.close());

describe('POST /vendors', () => {
  it('creates a vendor and answers 201 {ok, vendorId}', async () => {
    const res = await create({
      name: ' Hydraulic Supply Co ',
      email: 'orders@hydraulic.example.com',
      phone: '+1 555 0100',
      address: '1 Dock Rd',
      accountNumber: 'ACC-991',
      notes: 'Net 30',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ ok: true, vendorId: expect.any(String) });
    expect(await detail(body.vendorId)).toEqual({
      id: body.vendorId,
      name: 'Hydraulic Supply Co',
      email: 'orders@hydraulic.example.com',
      phone: '+1 555 0100',
      address: '1 Dock Rd',
      accountNumber: 'ACC-991',
      notes: 'Net 30',
      archivedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('refuses a name in use, ignoring case, with 409 vendor_name_taken; another organisation may use it', async () => {
    await makeVendor({ name: 'Filters Inc' });
    const res = await create({ name: 'FILTERS INC' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'vendor_name_taken' });
    expect((await create({ name: 'Foreign Parts' })).statusCode).toBe(201);
  });

  it('lets exactly one of several concurrent creates with the same name win', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => create({ name: 'Race Vendor' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
  });

  it.each([
    ['a missing name', { email: 'a@b.example' }, 'name'],
    ['a blank name', { name: '  ' }, 'name'],
    ['a malformed email', { name: 'Bad email', email: 'not-an-email' }, 'email'],
  ])('answers 422 for %s', async (_name, body, field) => {
    const res = await create(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toHaveProperty(field);
  });
});

describe('GET /vendors', () => {
  it('lists vendors in use alphabetically ignoring case, page by page', async () => {
    const org = await t.tenant('Lister');
    for (const name of ['delta', 'Alpha', 'charlie', 'Bravo', 'echo'])
      await makeVendor({ name, accountNumber: `N-${name}` }, org.key);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.api.get(`/api/v1/vendors?limit=2${cursor ? `&cursor=${cursor}` : ''}`, org.key);
      seen.push(...res.json().vendors.map((v: { name: string }) => v.name));
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(seen).toEqual(['Alpha', 'Bravo', 'charlie', 'delta', 'echo']);
  });

  it('filters with q on name, email and account number, case-insensitively; % is literal', async () => {
    await makeVendor({ name: 'Tyre World', email: 'sales@tyres.example.com' });
    await makeVendor({ name: 'Brake 100% Ltd', accountNumber: 'BRK-7' });
    expect(await names('?q=tyre')).toEqual(['Tyre World']);
    expect(await names('?q=SALES@')).toEqual(['Tyre World']);
    expect(await names('?q=brk-7')).toEqual(['Brake 100% Ltd']);
    expect(await names('?q=100%25')).toEqual(['Brake 100% Ltd']);
  });

  it('rejects a cursor it did not issue with 422', async () => {
    const res = await t.api.get('/api/v1/vendors?cursor=bm9wZQ', acme.key);
    expect(res.statusCode).toBe(422);
  });
});

describe('PATCH /vendors/:id', () => {
  it('changes fields, clears with null, and keeps its own name in another case', async () => {
    const id = await makeVendor({ name: 'Patch Me', phone: '1' });
    const res = await t.api.patch(`/api/v1/vendors/${id}`, acme.key, { name: 'PATCH ME', phone: null, notes: 'x' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await detail(id)).toMatchObject({ name: 'PATCH ME', phone: null, notes: 'x' });
  });

  it('refuses a name another vendor in use holds with 409, an empty patch with 422', async () => {
    await makeVendor({ name: 'Holder' });
    const id = await makeVendor({ name: 'Renamer' });
    const taken = await t.api.patch(`/api/v1/vendors/${id}`, acme.key, { name: 'holder' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error).toBe('vendor_name_taken');
    expect((await t.api.patch(`/api/v1/vendors/${id}`, acme.key, {})).statusCode).toBe(422);
  });
});

describe('DELETE /vendors/:id (archive)', () => {
  it('archives: hidden from the list, listed with archived=true, still readable, frozen, name freed', async () => {
    const id = await makeVendor({ name: 'Old Supplier' });
    const res = await t.api.delete(`/api/v1/vendors/${id}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, vendorId: id, archivedAt: expect.any(String) });
    const again = await t.api.delete(`/api/v1/vendors/${id}`, acme.key);
    expect(again.json().archivedAt).toBe(res.json().archivedAt);
    expect(await names()).not.toContain('Old Supplier');
    expect(await names('?archived=true')).toContain('Old Supplier');
    expect((await detail(id)).archivedAt).toBe(res.json().archivedAt);
    const patch = await t.api.patch(`/api/v1/vendors/${id}`, acme.key, { notes: 'x' });
    expect(patch.statusCode).toBe(409);
    expect(patch.json().error).toBe('vendor_archived');
    expect((await create({ name: 'old supplier' })).statusCode).toBe(201);
  });
});

securitySuite('vendors', () => ({ t, tenant: acme }), [
  { label: 'GET /vendors', method: 'GET', path: () => '/api/v1/vendors', scope: 'purchasing:read' },
  {
    label: 'POST /vendors',
    method: 'POST',
    path: () => '/api/v1/vendors',
    scope: 'purchasing:write',
    body: { name: 'Sec' },
  },
  {
    label: 'GET /vendors/:id',
    method: 'GET',
    path: () => `/api/v1/vendors/${foreignVendorId}`,
    scope: 'purchasing:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /vendors/:id',
    method: 'PATCH',
    path: () => `/api/v1/vendors/${foreignVendorId}`,
    scope: 'purchasing:write',
    body: { notes: 'x' },
    crossTenant: true,
  },
  {
    label: 'DELETE /vendors/:id',
    method: 'DELETE',
    path: () => `/api/v1/vendors/${foreignVendorId}`,
    scope: 'purchasing:write',
    crossTenant: true,
  },
]);
