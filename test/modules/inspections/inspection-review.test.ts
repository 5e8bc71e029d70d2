import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { answers, eventsOf, makeForm, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let formId: string;
let foreignInspectionId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  formId = await makeForm(t, acme.key);
  const otherForm = await makeForm(t, other.key);
  const otherAsset = await makeAsset(t, other.key);
  foreignInspectionId = (
    await submit(t, other.key, { inspectionFormId: otherForm, assetId: otherAsset, results: answers() })
  ).json().inspectionId;
});
afterAll(() => t.close());

const review = (id: string, body: unknown) => t.api.post(`/api/v1/inspections/${id}/review`, acme.key, body);
const status = async (assetId: string) =>
  (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset.lifecycleStatus;
const resolve = (flagId: string) =>
  t.api.patch(`/api/v1/flags/${flagId}`, acme.key, {
    status: 'RESOLVED',
    resolutionNote: 'Replaced the brake chamber on axle two',
    returnToServiceConfirmed: true,
  });

async function failedInspection(failures = answers({ brakes: { pass: false }, lights: { pass: false } })) {
  const assetId = await makeAsset(t, acme.key);
  const res = await submit(t, acme.key, { inspectionFormId: formId, assetId, results: failures });
  expect(res.statusCode, res.body).toBe(201);
  return { assetId, ...(res.json() as { inspectionId: string; flagIds: string[]; outOfService: boolean }) };
}

describe('POST /inspections/{id}/review', () => {
  it('defects_corrected is 409 while a flag of the inspection is open', async () => {
    const { inspectionId, flagIds } = await failedInspection();
    const res = await review(inspectionId, { outcome: 'defects_corrected' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'inspection_defects_open' });
    expect(res.json().openFlagIds.sort()).toEqual([...flagIds].sort());
  });

  it('out of service and back: critical flags resolved, defects_corrected returns the asset to IN_SERVICE', async () => {
    const { assetId, inspectionId, flagIds, outOfService } = await failedInspection();
    expect(outOfService).toBe(true);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    for (const id of flagIds) expect((await resolve(id)).statusCode).toBe(200);
    const res = await review(inspectionId, { outcome: 'defects_corrected', note: 'All fixed', reviewedBy: 'Mo' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      inspectionId,
      returnedToService: true,
      review: { outcome: 'defects_corrected', note: 'All fixed', reviewedBy: 'Mo', reviewedById: acme.userId },
    });
    expect(await status(assetId)).toBe('IN_SERVICE');
    const [reviewed] = (await eventsOf(t, acme.orgId, 'inspection.reviewed')).filter(
      (e) => e.inspectionId === inspectionId,
    );
    expect(reviewed).toMatchObject({
      assetId,
      outcome: 'defects_corrected',
      returnedToService: true,
      reviewedBy: 'Mo',
    });
    const updates = (await eventsOf(t, acme.orgId, 'asset.updated')).filter((e) => e.assetId === assetId);
    expect(updates.map((e) => e.lifecycleStatus)).toEqual(['OUT_OF_SERVICE', 'IN_SERVICE']);
    const detail = (await t.api.get(`/api/v1/inspections/${inspectionId}`, acme.key)).json().inspection;
    expect(detail.review).toMatchObject({ outcome: 'defects_corrected' });
    expect(detail.returnedToServiceAt).toEqual(expect.any(String));
  });

  it('a second review is 409 inspection_already_reviewed', async () => {
    const { inspectionId } = await failedInspection(answers());
    expect((await review(inspectionId, { outcome: 'no_correction_needed' })).statusCode).toBe(200);
    const again = await review(inspectionId, { outcome: 'no_correction_needed' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('inspection_already_reviewed');
  });

  it('no_correction_needed is allowed with open flags and leaves them open (and the asset out)', async () => {
    const { assetId, inspectionId, flagIds } = await failedInspection();
    const res = await review(inspectionId, { outcome: 'no_correction_needed', note: 'Within tolerance' });
    expect(res.json()).toMatchObject({ ok: true, returnedToService: false });
    for (const id of flagIds)
      expect((await t.api.get(`/api/v1/flags/${id}`, acme.key)).json().flag.status).toBe('OPEN');
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
  });

  it('no_correction_needed with only YELLOW flags open returns the asset once its critical flags are resolved', async () => {
    const { assetId, inspectionId, flagIds } = await failedInspection();
    const red = (
      await Promise.all(flagIds.map(async (id) => (await t.api.get(`/api/v1/flags/${id}`, acme.key)).json().flag))
    )
      .filter((f) => f.severity === 'RED')
      .map((f) => f.id);
    for (const id of red) await resolve(id);
    const res = await review(inspectionId, { outcome: 'no_correction_needed' });
    expect(res.json().returnedToService).toBe(true);
    expect(await status(assetId)).toBe('IN_SERVICE');
  });

  it('leaves the asset alone when it is no longer OUT_OF_SERVICE because of the inspection', async () => {
    const { assetId, inspectionId, flagIds } = await failedInspection();
    for (const id of flagIds) await resolve(id);
    await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'ARCHIVED' });
    const res = await review(inspectionId, { outcome: 'defects_corrected' });
    expect(res.json().returnedToService).toBe(false);
    expect(await status(assetId)).toBe('ARCHIVED');
  });

  it('keeps the asset out while another inspection holds a critical defect open on it', async () => {
    const { assetId, inspectionId, flagIds } = await failedInspection();
    const otherForm = await makeForm(t, acme.key);
    const second = await submit(t, acme.key, {
      inspectionFormId: otherForm,
      assetId,
      results: answers({ brakes: { pass: false } }),
    });
    expect(second.json().outOfService).toBe(false);
    for (const id of flagIds) await resolve(id);
    const res = await review(inspectionId, { outcome: 'defects_corrected' });
    expect(res.json().returnedToService).toBe(false);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
  });

  it('refuses an unknown outcome with 422', async () => {
    const { inspectionId } = await failedInspection(answers());
    const res = await review(inspectionId, { outcome: 'fixed' });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.outcome).toEqual(expect.any(String));
  });
});

securitySuite('inspection review', () => ({ t, tenant: acme }), [
  {
    label: 'POST /inspections/:id/review',
    method: 'POST',
    path: () => `/api/v1/inspections/${foreignInspectionId}/review`,
    scope: 'inspections:write',
    body: { outcome: 'no_correction_needed' },
    crossTenant: true,
  },
]);
