import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { answers, makeForm, smallFormBody, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignFormId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignFormId = await makeForm(t, other.key);
});
afterAll(() => t.close());

const create = (body: unknown) => t.api.post('/api/v1/inspection-forms', acme.key, body);
const form = async (id: string, query = '') =>
  (await t.api.get(`/api/v1/inspection-forms/${id}${query}`, acme.key)).json().inspectionForm;

describe('POST /inspection-forms', () => {
  it('creates version 1 with defaults filled in', async () => {
    const res = await create({
      name: 'Pre-shift',
      items: [{ key: 'brakes', label: 'Brakes', type: 'pass_fail' }],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ ok: true, inspectionFormId: expect.any(String), version: 1 });
    expect(await form(res.json().inspectionFormId)).toMatchObject({
      name: 'Pre-shift',
      description: null,
      assetClasses: [],
      outOfServiceOnCriticalFailure: true,
      template: null,
      version: 1,
      currentVersion: 1,
      status: 'ACTIVE',
      items: [
        {
          key: 'brakes',
          label: 'Brakes',
          type: 'pass_fail',
          required: true,
          critical: false,
          photoRequiredOnFail: false,
          min: null,
          max: null,
        },
      ],
    });
  });

  it.each([
    [{ items: [{ key: 'a', label: 'A', type: 'pass_fail' }] }, 'name', 'is required'],
    [{ name: 'X' }, 'items', 'is required'],
    [{ name: 'X', items: [] }, 'items', 'a form needs at least one item'],
    [
      {
        name: 'X',
        items: [
          { key: 'a', label: 'A', type: 'pass_fail' },
          { key: 'a', label: 'B', type: 'text' },
        ],
      },
      'items.1.key',
      '"a" is used by another item of this form',
    ],
    [{ name: 'X', items: [{ key: 'a', label: 'A', type: 'checkbox' }] }, 'items.0.type', undefined],
    [
      { name: 'X', items: [{ key: 'a', label: 'A', type: 'text', min: 1 }] },
      'items.0.min',
      'only number items take min and max',
    ],
    [
      { name: 'X', items: [{ key: 'a', label: 'A', type: 'number', min: 5, max: 1 }] },
      'items.0.min',
      'must not be greater than max',
    ],
    [
      {
        name: 'X',
        items: [
          { key: 'a', label: 'A', type: 'meter' },
          { key: 'b', label: 'B', type: 'meter' },
        ],
      },
      'items.1.type',
      'a form has at most one meter item: a submission records one reading',
    ],
    [{ name: 'X', items: [{ key: 'has space', label: 'A', type: 'text' }] }, 'items.0.key', undefined],
    [
      { template: 'no-such-template' },
      'template',
      'is not a built-in template; GET /inspection-form-templates lists them',
    ],
    [
      { template: 'dvir-pre-trip', items: [{ key: 'a', label: 'A', type: 'text' }] },
      'items',
      'comes from the template; PATCH the form to change it',
    ],
  ])('refuses %j with 422 on %s', async (body, field, message) => {
    const res = await create(body);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error).toBe('validation_failed');
    expect(res.json().fieldErrors[field]).toEqual(message ?? expect.any(String));
  });
});

describe('templates', () => {
  it('lists the DVIR of 49 CFR 396.11 and the off-road walk-around', async () => {
    const res = await t.api.get('/api/v1/inspection-form-templates', acme.key);
    expect(res.statusCode).toBe(200);
    const templates = res.json().templates as { id: string; items: { key: string; type: string }[] }[];
    const dvir = templates.find((x) => x.id === 'dvir-pre-trip')!;
    expect(dvir.items.map((i) => i.key)).toEqual(
      expect.arrayContaining([
        'service_brakes',
        'trailer_brake_connections',
        'parking_brake',
        'steering_mechanism',
        'lighting_devices',
        'tires',
        'horn',
        'windshield_wipers',
        'rear_vision_mirrors',
        'coupling_devices',
        'wheels_and_rims',
        'emergency_equipment',
        'odometer',
      ]),
    );
    const walk = templates.find((x) => x.id === 'daily-walk-around')!;
    expect(walk.items.filter((i) => i.type === 'meter')).toHaveLength(1);
    expect(walk.items.filter((i) => i.type === 'photo')).toHaveLength(1);
  });

  it('copies a template into the organisation, with overrides', async () => {
    const res = await create({ template: 'DVIR_PRE_TRIP', name: 'Our DVIR' });
    expect(res.statusCode, res.body).toBe(201);
    const copy = await form(res.json().inspectionFormId);
    expect(copy).toMatchObject({ name: 'Our DVIR', template: 'dvir-pre-trip', assetClasses: ['on-road'], version: 1 });
    expect(copy.items).toHaveLength(13);
  });
});

describe('versions', () => {
  it('a PATCH that changes items creates the next version; other fields change in place', async () => {
    const id = await makeForm(t, acme.key);
    const same = await t.api.patch(`/api/v1/inspection-forms/${id}`, acme.key, {
      name: 'Renamed',
      items: smallFormBody().items,
    });
    expect(same.json()).toEqual({ ok: true, inspectionFormId: id, version: 1 });
    const items = [...(smallFormBody().items as object[]), { key: 'horn', label: 'Horn', type: 'pass_fail' }];
    const changed = await t.api.patch(`/api/v1/inspection-forms/${id}`, acme.key, { items });
    expect(changed.json()).toEqual({ ok: true, inspectionFormId: id, version: 2 });
    expect(await form(id)).toMatchObject({ name: 'Renamed', version: 2, currentVersion: 2 });
    expect((await form(id)).items).toHaveLength(7);
    expect((await form(id, '?version=1')).items).toHaveLength(6);
    expect((await t.api.get(`/api/v1/inspection-forms/${id}?version=9`, acme.key)).statusCode).toBe(404);
  });

  it('submissions keep the version they answered; an older version may be named explicitly', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeForm(t, acme.key);
    const v1 = await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers() });
    expect(v1.statusCode, v1.body).toBe(201);
    const items = [...(smallFormBody().items as object[]), { key: 'horn', label: 'Horn', type: 'pass_fail' }];
    await t.api.patch(`/api/v1/inspection-forms/${id}`, acme.key, { items });
    // The current version requires the new item...
    const missing = await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers() });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().fieldErrors['results.horn']).toMatch(/is required/);
    // ...an app still showing version 1 says so and is checked against version 1.
    const old = await submit(t, acme.key, { inspectionFormId: id, version: 1, assetId, results: answers() });
    expect(old.statusCode, old.body).toBe(201);
    const detail = (await t.api.get(`/api/v1/inspections/${v1.json().inspectionId}`, acme.key)).json().inspection;
    expect(detail.version).toBe(1);
    expect(detail.items).toHaveLength(6);
    const unknown = await submit(t, acme.key, { inspectionFormId: id, version: 7, assetId, results: answers() });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().fieldErrors.version).toBe('this form has versions 1 to 2');
  });
});

describe('archive', () => {
  it('DELETE archives: listed under ARCHIVED only, frozen, no new submissions (409), past ones readable', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeForm(t, acme.key, smallFormBody({ name: 'To archive' }));
    const before = await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers() });
    const res = await t.api.delete(`/api/v1/inspection-forms/${id}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, inspectionFormId: id, status: 'ARCHIVED' });
    const again = await t.api.delete(`/api/v1/inspection-forms/${id}`, acme.key);
    expect(again.json().archivedAt).toBe(res.json().archivedAt);

    const active = (await t.api.get('/api/v1/inspection-forms?limit=200', acme.key)).json().inspectionForms;
    expect(active.map((f: { id: string }) => f.id)).not.toContain(id);
    const archived = (await t.api.get('/api/v1/inspection-forms?status=ARCHIVED', acme.key)).json().inspectionForms;
    expect(archived.map((f: { id: string }) => f.id)).toEqual([id]);

    const patch = await t.api.patch(`/api/v1/inspection-forms/${id}`, acme.key, { name: 'Back' });
    expect(patch.statusCode).toBe(409);
    expect(patch.json().error).toBe('inspection_form_archived');
    const after = await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers() });
    expect(after.statusCode).toBe(409);
    expect(after.json().error).toBe('inspection_form_archived');
    const past = await t.api.get(`/api/v1/inspections/${before.json().inspectionId}`, acme.key);
    expect(past.json().inspection.formName).toBe('To archive');
  });
});

describe('GET /inspection-forms', () => {
  it('pages newest first', async () => {
    const t2 = await t.tenant('Pager');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await makeForm(t, t2.key, smallFormBody({ name: `F${i}` })));
    const first = (await t.api.get('/api/v1/inspection-forms?limit=2', t2.key)).json();
    expect(first.inspectionForms.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    const second = (await t.api.get(`/api/v1/inspection-forms?limit=2&cursor=${first.nextCursor}`, t2.key)).json();
    expect(second.inspectionForms.map((f: { id: string }) => f.id)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeNull();
  });
});

securitySuite('inspection forms', () => ({ t, tenant: acme }), [
  {
    label: 'GET /inspection-form-templates',
    method: 'GET',
    path: () => '/api/v1/inspection-form-templates',
    scope: 'inspections:read',
  },
  { label: 'GET /inspection-forms', method: 'GET', path: () => '/api/v1/inspection-forms', scope: 'inspections:read' },
  {
    label: 'POST /inspection-forms',
    method: 'POST',
    path: () => '/api/v1/inspection-forms',
    scope: 'inspections:write',
    body: smallFormBody(),
  },
  {
    label: 'GET /inspection-forms/:id',
    method: 'GET',
    path: () => `/api/v1/inspection-forms/${foreignFormId}`,
    scope: 'inspections:read',
    crossTenant: true,
  },
  {
    label: 'PATCH /inspection-forms/:id',
    method: 'PATCH',
    path: () => `/api/v1/inspection-forms/${foreignFormId}`,
    scope: 'inspections:write',
    body: { name: 'Stolen' },
    crossTenant: true,
  },
  {
    label: 'DELETE /inspection-forms/:id',
    method: 'DELETE',
    path: () => `/api/v1/inspection-forms/${foreignFormId}`,
    scope: 'inspections:write',
    crossTenant: true,
  },
]);
