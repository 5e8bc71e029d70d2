// inspection.submitted reaches a real receiver once per submission: not again for an idempotent retry, not again
// on the next dispatch, and never for the events the subscription did not ask for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { makeAsset, makeWebhook } from '../../helpers/app/factories.ts';
import { startReceiver, type Receiver } from '../../helpers/delivery/harness.ts';
import { answers, makeForm, submit } from '../../helpers/inspections/inspection-helpers.ts';

let t: TestApp;
let acme: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile });
  acme = await t.tenant('Acme');
  await makeWebhook(t, acme.key, { url: `${receiver.origin}/inspections`, events: ['inspection.submitted'] });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const received = () => receiver.requests.filter((r) => r.path === '/inspections');

describe('inspection.submitted over a webhook', () => {
  it('one submission, one delivery; its idempotent retry, none', async () => {
    const assetId = await makeAsset(t, acme.key);
    const formId = await makeForm(t, acme.key);
    // A failing submission also records flag.created and asset.updated: the filter keeps them out.
    const body = { inspectionFormId: formId, assetId, results: answers({ brakes: { pass: false } }) };
    const first = await submit(t, acme.key, body, { 'Idempotency-Key': 'walk-around-1' });
    expect(first.statusCode, first.body).toBe(201);
    await t.deps.delivery.dispatcher.dispatchOnce();
    expect(received().map((r) => [r.json.event, r.json.data.inspectionId])).toEqual([
      ['inspection.submitted', first.json().inspectionId],
    ]);
    expect(received()[0].json.data).toMatchObject({ assetId, inspectionFormId: formId, result: 'FAIL' });

    const retry = await submit(t, acme.key, body, { 'Idempotency-Key': 'walk-around-1' });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    await t.deps.delivery.dispatcher.dispatchOnce();
    await t.deps.delivery.dispatcher.dispatchOnce();
    expect(received()).toHaveLength(1);
    expect(await t.db.prisma.webhookDelivery.count({ where: { orgId: acme.orgId } })).toBe(1);
  });
});
