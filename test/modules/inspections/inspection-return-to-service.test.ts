import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset, makeWorkOrder } from '../../helpers/app/factories.ts';
import { answers, eventsOf, makeForm, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let formId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  formId = await makeForm(t, acme.key);
});
afterAll(() => t.close());

const review = (id: string, outcome = 'no_correction_needed') =>
  t.api.post(`/api/v1/inspections/${id}/review`, acme.key, { outcome });
const status = async (assetId: string) =>
  (await t.api.get(`/api/v1/assets/${assetId}`, acme.key)).json().asset.lifecycleStatus;
const detail = async (id: string) => (await t.api.get(`/api/v1/inspections/${id}`, acme.key)).json().inspection;
async function resolve(flagId: string) {
  const res = await t.api.patch(`/api/v1/flags/${flagId}`, acme.key, {
    status: 'RESOLVED',
    resolutionNote: 'Replaced the brake chamber on axle two',
    returnToServiceConfirmed: true,
  });
  expect(res.statusCode, res.body).toBe(200);
}
const assetUpdates = async (assetId: string) =>
  (await eventsOf(t, acme.orgId, 'asset.updated')).filter((e) => e.assetId === assetId);

/** An inspection failing brakes (critical, RED) and lights (YELLOW) that took a fresh asset out of service. */
async function takenOut(assetId?: string, form = formId) {
  const asset = assetId ?? (await makeAsset(t, acme.key));
  const res = await submit(t, acme.key, {
    inspectionFormId: form,
    assetId: asset,
    results: answers({ brakes: { pass: false, note: 'Soft pedal' }, lights: { pass: false } }),
  });
  expect(res.statusCode, res.body).toBe(201);
  const { inspectionId, flagIds } = res.json() as { inspectionId: string; flagIds: string[] };
  const flags = (await detail(inspectionId)).flags as { id: string; severity: string }[];
  return {
    assetId: asset,
    inspectionId,
    outOfService: res.json().outOfService as boolean,
    red: flags.filter((f) => f.severity === 'RED').map((f) => f.id),
    yellow: flags.filter((f) => f.severity === 'YELLOW').map((f) => f.id),
    flagIds,
  };
}

describe('back in service when the critical flags are resolved after the review', () => {
  it('review (no_correction_needed) first, then resolving the RED flag returns the asset, in that transaction', async () => {
    const { assetId, inspectionId, red, yellow, outOfService } = await takenOut();
    expect(outOfService).toBe(true);
    expect((await review(inspectionId)).json()).toMatchObject({ ok: true, returnedToService: false });
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');

    await resolve(yellow[0]);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    await resolve(red[0]);
    expect(await status(assetId)).toBe('IN_SERVICE');

    const updates = await assetUpdates(assetId);
    expect(updates.map((e) => e.lifecycleStatus)).toEqual(['OUT_OF_SERVICE', 'IN_SERVICE']);
    expect(updates[1]).toMatchObject({
      changedFields: ['lifecycleStatus'],
      inspectionId,
      reason: expect.stringContaining('resolved'),
      actorId: acme.userId,
    });
    expect((await detail(inspectionId)).returnedToServiceAt).toEqual(expect.any(String));
  });

  it('resolve first, then review: the review returns the asset (and nothing happens twice)', async () => {
    const { assetId, inspectionId, red, yellow } = await takenOut();
    for (const id of [...red, ...yellow]) await resolve(id);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    const res = await review(inspectionId, 'defects_corrected');
    expect(res.json()).toMatchObject({ ok: true, returnedToService: true });
    expect(await status(assetId)).toBe('IN_SERVICE');
    expect((await assetUpdates(assetId)).map((e) => e.lifecycleStatus)).toEqual(['OUT_OF_SERVICE', 'IN_SERVICE']);
  });

  it('a review and the last resolution at the same moment return the asset once', async () => {
    const { assetId, inspectionId, red } = await takenOut();
    const [reviewed] = await Promise.all([review(inspectionId), resolve(red[0])]);
    expect(reviewed.statusCode).toBe(200);
    expect(await status(assetId)).toBe('IN_SERVICE');
    expect((await assetUpdates(assetId)).map((e) => e.lifecycleStatus)).toEqual(['OUT_OF_SERVICE', 'IN_SERVICE']);
  });

  it('an unreviewed inspection keeps the asset out when its flags are resolved', async () => {
    const { assetId, inspectionId, red, yellow } = await takenOut();
    for (const id of [...red, ...yellow]) await resolve(id);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    expect((await detail(inspectionId)).returnedToServiceAt).toBeNull();
  });

  it('a work order closed with a repair resolves the RED flag and returns the asset', async () => {
    const { assetId, inspectionId, red } = await takenOut();
    await review(inspectionId);
    const workOrderId = await makeWorkOrder(t, acme.key, { flagId: red[0] });
    const repair = await t.api.post('/api/v1/repairs', acme.key, { workOrderId, cost: 80, notes: 'Brake chamber' });
    expect(repair.statusCode, repair.body).toBe(201);
    expect((await t.api.get(`/api/v1/flags/${red[0]}`, acme.key)).json().flag.status).toBe('RESOLVED');
    expect(await status(assetId)).toBe('IN_SERVICE');
    expect((await assetUpdates(assetId)).at(-1)).toMatchObject({ lifecycleStatus: 'IN_SERVICE', inspectionId });
  });

  it("stays out while another inspection's critical flag is open on the asset", async () => {
    const { assetId, inspectionId, red } = await takenOut();
    const otherForm = await makeForm(t, acme.key);
    const second = await submit(t, acme.key, {
      inspectionFormId: otherForm,
      assetId,
      results: answers({ brakes: { pass: false } }),
    });
    expect(second.json().outOfService).toBe(false);
    await review(inspectionId);
    await resolve(red[0]);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    const secondRed = (await detail(second.json().inspectionId)).flags[0].id as string;
    await resolve(secondRed);
    expect(await status(assetId)).toBe('IN_SERVICE');
  });

  it('leaves an asset that someone moved to another status alone', async () => {
    const { assetId, inspectionId, red } = await takenOut();
    await review(inspectionId);
    expect((await t.api.patch(`/api/v1/assets/${assetId}`, acme.key, { lifecycleStatus: 'ARCHIVED' })).statusCode).toBe(
      200,
    );
    await resolve(red[0]);
    expect(await status(assetId)).toBe('ARCHIVED');
  });

  it('only the inspection that last took the asset out can return it', async () => {
    // A takes it out and is reviewed; someone puts the asset back by hand; B takes it out again, unreviewed.
    const a = await takenOut();
    await review(a.inspectionId);
    await t.api.patch(`/api/v1/assets/${a.assetId}`, acme.key, { lifecycleStatus: 'IN_SERVICE' });
    const otherForm = await makeForm(t, acme.key);
    const b = await takenOut(a.assetId, otherForm);
    expect(b.outOfService).toBe(true);
    for (const id of [...a.red, ...b.red]) await resolve(id);
    expect(await status(a.assetId)).toBe('OUT_OF_SERVICE');
    expect((await review(b.inspectionId)).json().returnedToService).toBe(true);
    expect(await status(a.assetId)).toBe('IN_SERVICE');
    expect((await assetUpdates(a.assetId)).at(-1)).toMatchObject({ inspectionId: b.inspectionId });
  });
});

describe('an item made critical while its YELLOW flag is open', () => {
  it('turns that flag RED when a critical failure joins it, so the asset stays out until it is resolved', async () => {
    const form = await makeForm(t, acme.key, {
      name: 'Evolving check',
      items: [{ key: 'mirror', label: 'Mirror', type: 'pass_fail' }],
    });
    const assetId = await makeAsset(t, acme.key);
    const first = await submit(t, acme.key, {
      inspectionFormId: form,
      assetId,
      results: [{ itemKey: 'mirror', pass: false }],
    });
    expect(first.statusCode, first.body).toBe(201);
    const [flagId] = first.json().flagIds as string[];
    const patched = await t.api.patch(`/api/v1/inspection-forms/${form}`, acme.key, {
      items: [{ key: 'mirror', label: 'Mirror', type: 'pass_fail', critical: true }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const second = await submit(t, acme.key, {
      inspectionFormId: form,
      assetId,
      results: [{ itemKey: 'mirror', pass: false }],
    });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().flagIds).toEqual([flagId]);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    expect((await t.api.get(`/api/v1/flags/${flagId}`, acme.key)).json().flag.severity).toBe('RED');
    await review(second.json().inspectionId);
    expect(await status(assetId)).toBe('OUT_OF_SERVICE');
    await resolve(flagId);
    expect(await status(assetId)).toBe('IN_SERVICE');
  });
});
