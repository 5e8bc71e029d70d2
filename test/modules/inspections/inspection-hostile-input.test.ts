// Size caps and odd inputs: every one is a 422 naming the field (or a clean 201), never a 500.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset } from '../../helpers/app/factories.ts';
import { answers, makeForm, smallFormBody, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let formId: string;

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.tenant('Acme');
  formId = await makeForm(t, acme.key);
});
afterAll(() => t.close());

const createForm = (body: unknown) => t.api.post('/api/v1/inspection-forms', acme.key, body);
const passFail = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `item_${i}`, label: `Item ${i}`, type: 'pass_fail' }));

async function readyAttachment(assetId: string) {
  const row = await t.db.prisma.attachment.create({
    data: {
      orgId: acme.orgId,
      subjectType: 'asset',
      subjectId: assetId,
      filename: 'leak.jpg',
      contentType: 'image/jpeg',
      size: 1234,
      sha256: 'a'.repeat(64),
      status: 'READY',
      storageKey: `test/${randomUUID()}`,
    },
  });
  return row.id;
}

describe('forms: caps', () => {
  it('takes 200 items and refuses 201, on create and on PATCH', async () => {
    const big = await createForm({ name: 'Two hundred', items: passFail(200) });
    expect(big.statusCode, big.body).toBe(201);
    const tooMany = await createForm({ name: 'Too many', items: passFail(201) });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().fieldErrors.items).toMatch(/at most 200 items/);
    const patch = await t.api.patch(`/api/v1/inspection-forms/${big.json().inspectionFormId}`, acme.key, {
      items: passFail(201),
    });
    expect(patch.statusCode).toBe(422);
    expect(patch.json().fieldErrors.items).toMatch(/at most 200 items/);

    // The 200 items answered, 200 failing: 200 flags in one submission.
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: big.json().inspectionFormId,
      assetId,
      results: passFail(200).map((i) => ({ itemKey: i.key, pass: false })),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().flagIds).toHaveLength(200);
  });

  it('caps the length of names, labels, keys and descriptions', async () => {
    const res = await createForm({
      name: 'n'.repeat(201),
      description: 'd'.repeat(2001),
      items: [
        { key: 'k'.repeat(65), label: 'Brakes', type: 'pass_fail' },
        { key: 'lights', label: 'l'.repeat(201), type: 'pass_fail' },
      ],
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(
      ['description', 'items.0.key', 'items.1.label', 'name'].sort(),
    );
  });

  it('refuses duplicate item keys', async () => {
    const res = await createForm({
      name: 'Twice',
      items: [
        { key: 'brakes', label: 'Brakes', type: 'pass_fail' },
        { key: 'brakes', label: 'Brakes again', type: 'pass_fail' },
      ],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({ 'items.1.key': '"brakes" is used by another item of this form' });
  });

  it('refuses ill-typed items, each at its own path', async () => {
    const res = await createForm({
      name: 'Odd',
      items: [
        { key: 'psi', label: 'Pressure', type: 'number', min: '30' },
        { key: 'x', label: 'X', type: 'checkbox' },
        'not an item',
      ],
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(['items.0.min', 'items.1.type', 'items.2']);
  });

  it('refuses an out-of-range ?version= on a form read', async () => {
    const res = await t.api.get(`/api/v1/inspection-forms/${formId}?version=99999999999`, acme.key);
    expect(res.statusCode).toBe(422);
  });
});

describe('submissions: caps and odd answers', () => {
  it('caps notes, text values, the inspector name and the signature', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      inspectorName: 'i'.repeat(201),
      signature: { name: 's'.repeat(201), signedAt: new Date().toISOString() },
      results: answers({ lights: { pass: false, note: 'n'.repeat(1001) }, remarks: { value: 'r'.repeat(2001) } }),
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(
      ['inspectorName', 'results.1.note', 'results.3.value', 'signature.name'].sort(),
    );
  });

  it('refuses more results than a form can have items', async () => {
    const assetId = await makeAsset(t, acme.key);
    const results = Array.from({ length: 201 }, (_, i) => ({ itemKey: `ghost_${i}`, pass: true }));
    const res = await submit(t, acme.key, { inspectionFormId: formId, assetId, results });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.results).toEqual(expect.any(String));
  });

  it('refuses results for unknown items and the same item twice, keyed by item', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: [...answers(), { itemKey: 'brakes', pass: false }, { itemKey: 'not_on_the_form', pass: true }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors).toEqual({
      'results.brakes': 'is answered more than once',
      'results.not_on_the_form': 'is not an item of this form (version 1)',
    });
    expect(await t.db.prisma.inspection.count({ where: { assetId } })).toBe(0);
  });

  it('caps attachmentIds per answer (20) and per submission (200)', async () => {
    const assetId = await makeAsset(t, acme.key);
    const tooMany = Array.from({ length: 21 }, () => randomUUID());
    const perAnswer = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: answers({ photo: { attachmentIds: tooMany } }),
    });
    expect(perAnswer.statusCode).toBe(422);
    expect(Object.keys(perAnswer.json().fieldErrors)).toEqual(['results.3.attachmentIds']);

    const big = await createForm({ name: 'Photo heavy', items: passFail(11) });
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const perSubmission = await submit(t, acme.key, {
      inspectionFormId: big.json().inspectionFormId,
      assetId,
      results: passFail(11).map((i) => ({ itemKey: i.key, pass: true, attachmentIds: ids })),
    });
    expect(perSubmission.statusCode).toBe(422);
    expect(perSubmission.json().fieldErrors.results).toMatch(/at most 200 attachments/);
  });

  it('names an attachment twice once', async () => {
    const assetId = await makeAsset(t, acme.key);
    const photo = await readyAttachment(assetId);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: answers({ photo: { attachmentIds: [photo, photo, photo] } }),
    });
    expect(res.statusCode, res.body).toBe(201);
    const detail = (await t.api.get(`/api/v1/inspections/${res.json().inspectionId}`, acme.key)).json().inspection;
    expect(detail.attachments.map((a: { id: string }) => a.id)).toEqual([photo]);
  });

  it('refuses a version beyond any a form can have with 422, not a database error', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      version: 2 ** 40,
      assetId,
      results: answers(),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.version).toEqual(expect.any(String));
  });

  it('cuts a long flag reason without splitting a character in two', async () => {
    const assetId = await makeAsset(t, acme.key);
    // Both parities, so one of the two cuts lands between the halves of an emoji.
    for (const lead of ['', 'x']) {
      const res = await submit(t, acme.key, {
        inspectionFormId: formId,
        assetId,
        results: answers({ lights: { pass: false, note: lead + '🛞'.repeat(499) } }),
      });
      expect(res.statusCode, res.body).toBe(201);
      const flag = (await t.api.get(`/api/v1/flags/${res.json().flagIds[0]}`, acme.key)).json().flag;
      expect(flag.note.length).toBeLessThanOrEqual(500);
      expect(flag.note).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|\uFFFD/);
      await t.api.patch(`/api/v1/flags/${flag.id}`, acme.key, { status: 'RESOLVED', resolutionNote: 'Bulb' });
    }
  });

  it('ignores nothing silently: a value of the wrong shape is a 422 of its own field', async () => {
    const assetId = await makeAsset(t, acme.key);
    const res = await submit(t, acme.key, {
      inspectionFormId: formId,
      assetId,
      results: [{ itemKey: 'brakes', pass: 'yes' }, { itemKey: 'tyre_psi', value: { psi: 35 } }, 'lights'],
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().fieldErrors).sort()).toEqual(
      ['results.0.pass', 'results.1.value', 'results.2'].sort(),
    );
  });
});

describe('a small form stays valid', () => {
  it('smallFormBody is accepted (the caps above are not off by one)', async () => {
    expect((await createForm(smallFormBody({ name: 'n'.repeat(200) }))).statusCode).toBe(201);
  });
});
