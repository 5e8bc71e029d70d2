import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { answers, makeForm, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let foreignInspectionId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  const otherForm = await makeForm(t, other.key);
  const otherAsset = await makeAsset(t, other.key);
  foreignInspectionId = (
    await submit(t, other.key, { inspectionFormId: otherForm, assetId: otherAsset, results: answers() })
  ).json().inspectionId;
});
afterAll(() => t.close());

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const HOUR = 3600_000;

describe('GET /inspections', () => {
  it('newest inspectedAt first, keyset-paginated, filtered by asset, form, result and since', async () => {
    const tenant = await t.tenant('Lister');
    const form = await makeForm(t, tenant.key);
    const form2 = await makeForm(t, tenant.key);
    const a = await makeAsset(t, tenant.key);
    const b = await makeAsset(t, tenant.key);
    // Assets exist from now on; backdate their creation so inspections may be dated earlier.
    await t.db.prisma.asset.updateMany({
      where: { orgId: tenant.orgId },
      data: { createdAt: new Date(Date.now() - 10 * HOUR) },
    });
    const made: Record<string, string> = {};
    const add = async (name: string, assetId: string, f: string, hoursAgo: number, fail = false) => {
      const res = await submit(t, tenant.key, {
        inspectionFormId: f,
        assetId,
        inspectedAt: ago(hoursAgo * HOUR),
        results: answers(fail ? { lights: { pass: false } } : {}),
      });
      expect(res.statusCode, res.body).toBe(201);
      made[name] = res.json().inspectionId;
    };
    await add('a5', a, form, 5);
    await add('b4', b, form2, 4, true);
    await add('a3', a, form, 3, true);
    await add('b2', b, form, 2);
    await add('a1', a, form2, 1);
    const ids = async (query: string) => {
      const res = await t.api.get(`/api/v1/inspections?${query}`, tenant.key);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().inspections.map((i: { id: string }) => i.id);
    };
    const names = (list: string[]) => list.map((id) => Object.entries(made).find(([, v]) => v === id)![0]);
    expect(names(await ids(''))).toEqual(['a1', 'b2', 'a3', 'b4', 'a5']);
    expect(names(await ids(`assetId=${a}`))).toEqual(['a1', 'a3', 'a5']);
    expect(names(await ids(`inspectionFormId=${form2}`))).toEqual(['a1', 'b4']);
    expect(names(await ids('result=FAIL'))).toEqual(['a3', 'b4']);
    expect(names(await ids(`since=${ago(3.5 * HOUR)}`))).toEqual(['a1', 'b2', 'a3']);
    const first = (await t.api.get('/api/v1/inspections?limit=2', tenant.key)).json();
    expect(names(first.inspections.map((i: { id: string }) => i.id))).toEqual(['a1', 'b2']);
    expect(names(await ids(`limit=2&cursor=${first.nextCursor}`))).toEqual(['a3', 'b4']);
    const bad = await t.api.get('/api/v1/inspections?cursor=garbage', tenant.key);
    expect(bad.statusCode).toBe(422);
  });
});

describe('GET /inspections/summary', () => {
  it('per asset: last inspection, open defects, notInspected since the given time; paged by asset id', async () => {
    const tenant = await t.tenant('Fleet');
    const form = await makeForm(t, tenant.key);
    const [idle, good, bad] = [
      await makeAsset(t, tenant.key, { nickname: 'Idle' }),
      await makeAsset(t, tenant.key, { nickname: 'Good' }),
      await makeAsset(t, tenant.key, { nickname: 'Bad' }),
    ];
    await t.db.prisma.asset.updateMany({
      where: { orgId: tenant.orgId },
      data: { createdAt: new Date(Date.now() - 10 * HOUR) },
    });
    const recent = await submit(t, tenant.key, { inspectionFormId: form, assetId: good, results: answers() });
    // A late-filed older inspection does not replace the latest one.
    await submit(t, tenant.key, {
      inspectionFormId: form,
      assetId: good,
      inspectedAt: ago(8 * HOUR),
      results: answers(),
    });
    const stale = await submit(t, tenant.key, {
      inspectionFormId: form,
      assetId: bad,
      inspectedAt: ago(6 * HOUR),
      results: answers({ brakes: { pass: false }, lights: { pass: false } }),
    });
    const res = await t.api.get(`/api/v1/inspections/summary?since=${ago(2 * HOUR)}`, tenant.key);
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().assets as Record<string, unknown>[];
    expect(rows.map((r) => r.assetId)).toEqual([idle, good, bad].sort());
    const byId = Object.fromEntries(rows.map((r) => [r.assetId, r]));
    expect(byId[idle]).toEqual({
      assetId: idle,
      nickname: 'Idle',
      lifecycleStatus: 'IN_SERVICE',
      lastInspectionId: null,
      lastInspectedAt: null,
      lastResult: null,
      openDefects: 0,
      notInspected: true,
    });
    expect(byId[good]).toMatchObject({
      lastInspectionId: recent.json().inspectionId,
      lastResult: 'PASS',
      openDefects: 0,
      notInspected: false,
    });
    expect(byId[bad]).toMatchObject({
      lastInspectionId: stale.json().inspectionId,
      lastResult: 'FAIL',
      openDefects: 2,
      notInspected: true,
      lifecycleStatus: 'OUT_OF_SERVICE',
    });
    const page1 = (await t.api.get('/api/v1/inspections/summary?limit=2', tenant.key)).json();
    expect(page1.assets).toHaveLength(2);
    const page2 = (
      await t.api.get(`/api/v1/inspections/summary?limit=2&cursor=${page1.nextCursor}`, tenant.key)
    ).json();
    expect(page2.assets.map((r: { assetId: string }) => r.assetId)).toEqual([[idle, good, bad].sort()[2]]);
    expect(page2.nextCursor).toBeNull();
  });

  it('without since, counts the last 24 hours', async () => {
    const res = await t.api.get('/api/v1/inspections/summary', acme.key);
    expect(res.statusCode).toBe(200);
    const since = new Date(res.json().since).getTime();
    expect(Math.abs(Date.now() - 24 * HOUR - since)).toBeLessThan(60_000);
  });
});

securitySuite('inspections (read)', () => ({ t, tenant: acme }), [
  { label: 'GET /inspections', method: 'GET', path: () => '/api/v1/inspections', scope: 'inspections:read' },
  {
    label: 'GET /inspections/summary',
    method: 'GET',
    path: () => '/api/v1/inspections/summary',
    scope: 'inspections:read',
  },
  {
    label: 'GET /inspections/:id',
    method: 'GET',
    path: () => `/api/v1/inspections/${foreignInspectionId}`,
    scope: 'inspections:read',
    crossTenant: true,
  },
]);
