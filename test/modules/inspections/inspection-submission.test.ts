import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import { tempAttachmentsDir, uploadFile } from '../../helpers/app/attachments.ts';
import { makeAsset, makeHoursLog, makeWebhook } from '../../helpers/app/factories.ts';
import {
  answers,
  bigFormBody,
  eventsOf,
  makeForm,
  smallFormBody,
  submit,
} from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let png: Buffer;
const storage = tempAttachmentsDir();
let acme: TestTenant;
let other: TestTenant;
let formId: string;
let foreignAssetId: string;

beforeAll(async () => {
  t = await createTestApp({ ATTACHMENTS_DIR: storage.dir, PUBLIC_BASE_URL: 'https://fleet.example.com' });
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#a00' } })
    .png()
    .toBuffer();
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  formId = await makeForm(t, acme.key);
  foreignAssetId = await makeAsset(t, other.key);
});
afterAll(async () => {
  await t.close();
  storage.remove();
});

/** A photo uploaded on the asset through the attachments API. */
async function upload(assetId: string, key = acme.key) {
  const res = await uploadFile(t, key, { subjectType: 'asset', subjectId: assetId }, { name: 'leak.png', bytes: png });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().attachmentId as string;
}

/** An attachment row as a presigned upload leaves it (PENDING until completed), or READY. */
async function attachment(assetId: string, orgId = acme.orgId, status: 'READY' | 'PENDING' = 'READY') {
  const row = await t.db.prisma.attachment.create({
    data: {
      orgId,
      subjectType: 'asset',
      subjectId: assetId,
      filename: 'leak.jpg',
      contentType: 'image/jpeg',
      size: 1234,
      sha256: 'a'.repeat(64),
      status,
      storageKey: `test/${randomUUID()}`,
    },
  });
  return row.id;
}

const flag = async (id: string) => (await t.api.get(`/api/v1/flags/${id}`, acme.key)).json().flag;
const asset = async (id: string) => (await t.api.get(`/api/v1/assets/${id}`, acme.key)).json().asset;

describe('POST /inspections: pass and fail', () => {
  it('a passing inspection: 201 PASS, no flags, no reading', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, { inspectionFormId: formId, assetId, results: answers() });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      ok: true,
      inspectionId: expect.any(String),
      result: 'PASS',
      flagIds: [],
      logId: null,
      outOfService: false,
    });
    const [event] = (await eventsOf(t, acme.orgId, 'inspection.submitted')).filter(
      (e) => e.inspectionId === res.json().inspectionId,
    );
    expect(event).toMatchObject({ assetId, inspectionFormId: formId, result: 'PASS', failedItems: [], flagIds: [] });
  });

  it('each failed item opens a flag (RED if critical, else YELLOW) naming form, item and note; critical takes the asset out', async () => {
    const assetId = await makeAsset(t, acme.key, { nickname: 'Dozer 9' });
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      inspectorName: 'Olive',
      results: answers({
        brakes: { pass: false, note: 'Soft pedal' },
        lights: { pass: false },
        tyre_psi: { value: 22 },
      }),
      signature: { name: 'Olive', signedAt: new Date().toISOString() },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ result: 'FAIL', outOfService: true });
    expect(body.flagIds).toHaveLength(3);
    const flags = await Promise.all(body.flagIds.map(flag));
    expect(flags.map((f) => [f.severity, f.note, f.inspectionId])).toEqual([
      ['RED', 'Inspection "Daily check": Brakes failed - Soft pedal', body.inspectionId],
      ['YELLOW', 'Inspection "Daily check": Lights failed', body.inspectionId],
      ['YELLOW', 'Inspection "Daily check": Tyre pressure: 22 is outside min 30, max 40', body.inspectionId],
    ]);
    expect((await asset(assetId)).lifecycleStatus).toBe('OUT_OF_SERVICE');
    const updated = (await eventsOf(t, acme.orgId, 'asset.updated')).filter((e) => e.assetId === assetId);
    expect(updated).toEqual([
      expect.objectContaining({
        changedFields: ['lifecycleStatus'],
        lifecycleStatus: 'OUT_OF_SERVICE',
        inspectionId: body.inspectionId,
        reason: 'Critical failure on inspection "Daily check": Brakes',
      }),
    ]);
    const created = (await eventsOf(t, acme.orgId, 'flag.created')).filter((e) => e.assetId === assetId);
    expect(created.map((e) => e.flagId).sort()).toEqual([...body.flagIds].sort());
    const [submitted] = (await eventsOf(t, acme.orgId, 'inspection.submitted')).filter((e) => e.assetId === assetId);
    expect(submitted).toMatchObject({
      inspectionId: body.inspectionId,
      result: 'FAIL',
      failedItems: ['brakes', 'lights', 'tyre_psi'],
      outOfService: true,
      inspectorName: 'Olive',
    });

    const detail = (await t.api.get(`/api/v1/inspections/${body.inspectionId}`, acme.key)).json().inspection;
    expect(detail).toMatchObject({
      id: body.inspectionId,
      assetId,
      result: 'FAIL',
      outOfService: true,
      signature: { name: 'Olive' },
      review: null,
      formName: 'Daily check',
    });
    expect(detail.results.map((r: { itemKey: string; failed: boolean }) => [r.itemKey, r.failed])).toEqual([
      ['brakes', true],
      ['lights', true],
      ['tyre_psi', true],
    ]);
    expect(detail.flags.map((f: { itemKey: string; opened: boolean }) => [f.itemKey, f.opened]).sort()).toEqual([
      ['brakes', true],
      ['lights', true],
      ['tyre_psi', true],
    ]);
  });

  it('a critical failure on a form with outOfServiceOnCriticalFailure false leaves the asset in service', async () => {
    const assetId = await makeAsset(t, acme.key);
    const lenient = await makeForm(t, acme.key, smallFormBody({ outOfServiceOnCriticalFailure: false }));
    const res = await submit(t, acme.key, {
      inspectionFormId: lenient,
      assetId,
      results: answers({ brakes: { pass: false } }),
    });
    expect(res.json()).toMatchObject({ result: 'FAIL', outOfService: false });
    expect((await asset(assetId)).lifecycleStatus).toBe('IN_SERVICE');
  });

  it('while its flag is open, a later failure of the same item adds to it instead of opening another', async () => {
    const assetId = await makeAsset(t, acme.key);
    const first = (
      await submit(t, acme.key, { inspectionFormId: formId, assetId, results: answers({ lights: { pass: false } }) })
    ).json();
    const second = (
      await submit(t, acme.key, { inspectionFormId: formId, assetId, results: answers({ lights: { pass: false } }) })
    ).json();
    expect(second.flagIds).toEqual(first.flagIds);
    expect(await t.db.prisma.flag.count({ where: { assetId } })).toBe(1);
    const detail = (await t.api.get(`/api/v1/inspections/${second.inspectionId}`, acme.key)).json().inspection;
    expect(detail.flags).toEqual([expect.objectContaining({ id: first.flagIds[0], opened: false, itemKey: 'lights' })]);
    expect((await eventsOf(t, acme.orgId, 'flag.created')).filter((e) => e.assetId === assetId)).toHaveLength(1);
    // Once resolved, the next failure opens a new flag.
    await t.api.patch(`/api/v1/flags/${first.flagIds[0]}`, acme.key, { status: 'RESOLVED', resolutionNote: 'bulb' });
    const third = (
      await submit(t, acme.key, { inspectionFormId: formId, assetId, results: answers({ lights: { pass: false } }) })
    ).json();
    expect(third.flagIds).toHaveLength(1);
    expect(third.flagIds[0]).not.toBe(first.flagIds[0]);
  });
});

describe('concurrent submissions', () => {
  it('failing the same item on one asset at once share one flag', async () => {
    const assetId = await makeAsset(t, acme.key);
    const body = { inspectionFormId: formId, assetId, results: answers({ lights: { pass: false } }) };
    const all = await Promise.all([1, 2, 3].map(() => submit(t, acme.key, body)));
    expect(all.map((r) => r.statusCode)).toEqual([201, 201, 201]);
    expect(new Set(all.map((r) => r.json().flagIds[0])).size).toBe(1);
    expect(await t.db.prisma.flag.count({ where: { assetId } })).toBe(1);
  });
});

describe('meter items', () => {
  it('a meter value is a reading with source inspection; its logId is returned', async () => {
    const assetId = await makeAsset(t, acme.key);
    await makeHoursLog(t, acme.key, assetId, 100);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: [...answers(), { itemKey: 'hours', value: 100.5 }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const { logId, inspectionId } = res.json();
    expect(logId).toEqual(expect.any(String));
    const log = await t.db.prisma.meterLog.findFirstOrThrow({ where: { id: logId } });
    expect(log).toMatchObject({ hoursReading: 100.5, source: 'inspection', sourceId: inspectionId, assetId });
    expect((await t.db.prisma.asset.findUniqueOrThrow({ where: { id: assetId } })).lastMeterReading).toBe(100.5);
  });

  it("the reading's own rules are the item's: a lower reading without a note is 422 on results.hours, nothing written", async () => {
    const assetId = await makeAsset(t, acme.key);
    await makeHoursLog(t, acme.key, assetId, 500);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: answers({ brakes: { pass: false }, hours: { value: 400 } }),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors['results.hours']).toMatch(/^note is required to explain a reading lower/);
    expect(await t.db.prisma.inspection.count({ where: { assetId } })).toBe(0);
    expect(await t.db.prisma.flag.count({ where: { assetId } })).toBe(0);
  });

  it('an asset without a meter refuses a meter answer', async () => {
    const assetId = await makeAsset(t, acme.key, { assetClass: 'trailer' });
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: [...answers(), { itemKey: 'hours', value: 5 }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors['results.hours']).toMatch(/no meter/);
  });
});

describe('photos', () => {
  it('attachments of the asset are listed by the inspection and its flags; photoRequiredOnFail needs one', async () => {
    const assetId = await makeAsset(t, acme.key);
    const photoForm = await makeForm(
      t,
      acme.key,
      smallFormBody({
        name: 'Photo check',
        items: [
          { key: 'leaks', label: 'Leaks', type: 'pass_fail', photoRequiredOnFail: true },
          { key: 'photo', label: 'Machine photo', type: 'photo' },
        ],
      }),
    );
    const a1 = await upload(assetId);
    const a2 = await upload(assetId);
    const without = await submit(t, acme.key, {
      inspectionFormId: photoForm,
      assetId,
      results: [
        { itemKey: 'leaks', pass: false },
        { itemKey: 'photo', attachmentIds: [a2] },
      ],
    });
    expect(without.statusCode).toBe(422);
    expect(without.json().fieldErrors).toEqual({
      'results.leaks': 'failed, and this item needs a photo when it fails: name it in attachmentIds',
    });
    const res = await submit(t, acme.key, {
      inspectionFormId: photoForm,
      assetId,
      results: [
        { itemKey: 'leaks', pass: false, note: 'Drip at pump', attachmentIds: [a1] },
        { itemKey: 'photo', attachmentIds: [a2] },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const detail = (await t.api.get(`/api/v1/inspections/${res.json().inspectionId}`, acme.key)).json().inspection;
    expect(detail.attachments.map((a: { id: string; itemKey: string }) => [a.id, a.itemKey]).sort()).toEqual(
      [
        [a1, 'leaks'],
        [a2, 'photo'],
      ].sort(),
    );
    expect(detail.flags).toEqual([expect.objectContaining({ itemKey: 'leaks', attachmentIds: [a1] })]);
    expect(detail.attachments[0].contentUrl).toMatch(/^https:\/\/fleet\.example\.com\/api\/v1\/attachments\//);
    // The new flag shows the failed item's photo, as a flag raised with photoAttachmentId does.
    const flagRow = await flag(detail.flags[0].id);
    expect(flagRow.photoUrl).toBe(`https://fleet.example.com/api/v1/attachments/${a1}/content`);
    expect(flagRow.note).toBe('Inspection "Photo check": Leaks failed - Drip at pump');
  });

  it('refuses attachments of another asset, another organisation, or not yet uploaded', async () => {
    const assetId = await makeAsset(t, acme.key);
    const elsewhere = await upload(await makeAsset(t, acme.key));
    const pending = await attachment(assetId, acme.orgId, 'PENDING');
    const foreign = await upload(foreignAssetId, other.key);
    for (const id of [elsewhere, pending, foreign, 'nope']) {
      const res = await submit(t, acme.key, {
        inspectionFormId: formId,
        assetId,
        results: answers({ lights: { pass: true, attachmentIds: [id] } }),
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().fieldErrors['results.lights']).toBe(`attachment ${id} is not a ready attachment of this asset`);
    }
  });
});

describe('Idempotency-Key', () => {
  it('a retry returns the first answer and writes nothing; the same key with another body is 422', async () => {
    const assetId = await makeAsset(t, acme.key);
    const body = { inspectionFormId: formId, assetId, results: answers({ brakes: { pass: false } }) };
    const key = { 'Idempotency-Key': `insp-${randomUUID()}` };
    const first = await submit(t, acme.key, body, key);
    const again = await submit(t, acme.key, body, key);
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await t.db.prisma.inspection.count({ where: { assetId } })).toBe(1);
    expect(await t.db.prisma.flag.count({ where: { assetId } })).toBe(1);
    const changed = await submit(t, acme.key, { ...body, inspectorName: 'Someone else' }, key);
    expect(changed.statusCode).toBe(422);
    expect(changed.json().error).toBe('idempotency_key_reused');
  });
});

describe('events', () => {
  it('are delivered once: one delivery per event and subscription', async () => {
    const tenant = await t.tenant('Hooks');
    await makeWebhook(t, tenant.key, {
      events: ['inspection.submitted', 'flag.created', 'asset.updated', 'inspection.reviewed'],
    });
    const assetId = await makeAsset(t, tenant.key);
    const form = await makeForm(t, tenant.key);
    const res = await submit(
      t,
      tenant.key,
      { inspectionFormId: form, assetId, results: answers({ brakes: { pass: false }, lights: { pass: false } }) },
      { 'Idempotency-Key': 'hooks-1' },
    );
    await submit(
      t,
      tenant.key,
      { inspectionFormId: form, assetId, results: answers({ brakes: { pass: false }, lights: { pass: false } }) },
      { 'Idempotency-Key': 'hooks-1' },
    );
    const deliveries = await t.db.prisma.webhookDelivery.groupBy({
      by: ['eventType'],
      where: { orgId: tenant.orgId },
      _count: { _all: true },
    });
    const counts = Object.fromEntries(deliveries.map((d) => [d.eventType, d._count._all]));
    expect(counts).toEqual({ 'inspection.submitted': 1, 'flag.created': 2, 'asset.updated': 1 });
    expect(res.json().flagIds).toHaveLength(2);
  });
});

describe('a form item removed while its flag is open', () => {
  it('the flag stays open; a later version with the item back adds to it', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeForm(t, acme.key);
    const first = (
      await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers({ lights: { pass: false } }) })
    ).json();
    const without = (smallFormBody().items as { key: string }[]).filter((i) => i.key !== 'lights');
    await t.api.patch(`/api/v1/inspection-forms/${id}`, acme.key, { items: without });
    expect((await flag(first.flagIds[0])).status).toBe('OPEN');
    const v2 = await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers({ lights: null }) });
    expect(v2.json()).toMatchObject({ result: 'PASS', flagIds: [] });
    await t.api.patch(`/api/v1/inspection-forms/${id}`, acme.key, { items: smallFormBody().items });
    const v3 = (
      await submit(t, acme.key, { inspectionFormId: id, assetId, results: answers({ lights: { pass: false } }) })
    ).json();
    expect(v3.flagIds).toEqual(first.flagIds);
  });
});

describe('a 40-item inspection', () => {
  it('with 3 failures opens 3 flags', async () => {
    const assetId = await makeAsset(t, acme.key);
    const id = await makeForm(t, acme.key, bigFormBody());
    const results = Array.from({ length: 40 }, (_, i) => ({
      itemKey: `item_${i + 1}`,
      pass: ![3, 20, 33].includes(i + 1),
    }));
    const res = await submit(t, acme.key, { inspectionFormId: id, assetId, results });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ result: 'FAIL', outOfService: true });
    expect(res.json().flagIds).toHaveLength(3);
  });
});

securitySuite('inspections', () => ({ t, tenant: acme }), [
  {
    label: 'POST /inspections',
    method: 'POST',
    path: () => '/api/v1/inspections',
    scope: 'inspections:write',
    body: { inspectionFormId: 'x', assetId: 'y', results: [] },
  },
]);
