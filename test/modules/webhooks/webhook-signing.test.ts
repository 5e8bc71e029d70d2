import { createHmac, randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../../src/core/clock.ts';
import { createTestApp, type TestApp } from '../../helpers/app/test-app.ts';
import { makeAsset, makeWebhook } from '../../helpers/app/factories.ts';
import type { TestTenant } from '../../helpers/app/tenants.ts';
import { securitySuite } from '../../helpers/app/security-suite.ts';
import {
  loadPublishedVerifier,
  startReceiver,
  type ReceivedRequest,
  type Receiver,
} from '../../helpers/delivery/harness.ts';

/** A clock the test moves forward instead of sleeping (secret overlaps are hours long). */
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

let t: TestApp;
let acme: TestTenant;
let other: TestTenant;
let receiver: Receiver;
let foreignId: string;
let verifyWebhook: Awaited<ReturnType<typeof loadPublishedVerifier>>['verifyWebhook'];

beforeAll(async () => {
  receiver = await startReceiver();
  ({ verifyWebhook } = await loadPublishedVerifier());
  t = await createTestApp({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_BREAKER_FAILURES: '1000' }, { clock });
  acme = await t.tenant('Acme');
  other = await t.tenant('Other');
  foreignId = (await makeWebhook(t, other.key, { url: `${receiver.origin}/theirs`, events: ['asset.created'] }))
    .subscriptionId;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const subscribe = (path: string) =>
  makeWebhook(t, acme.key, { url: `${receiver.origin}${path}`, events: ['asset.created'] });
const rotate = (id: string, body?: unknown) =>
  t.api.raw('POST', `/api/v1/webhooks/${id}/rotate-secret`, acme.key, body);
/** Creates an asset (one asset.created) and delivers it; returns what the receiver at `path` got. */
async function deliverOne(path: string): Promise<ReceivedRequest> {
  const before = at(path).length;
  await makeAsset(t, acme.key, { nickname: `Signed ${randomBytes(3).toString('hex')}`, assetClass: 'trailer' });
  await t.deps.delivery.dispatcher.dispatchOnce();
  const got = at(path);
  expect(got).toHaveLength(before + 1);
  return got[got.length - 1];
}

/** Verification with the official libraries, their "now" being the service's clock. */
function officialVerify(lib: 'standardwebhooks' | 'svix', secret: string, req: ReceivedRequest, body = req.rawBody) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(clock.now());
  try {
    const wh = lib === 'svix' ? new SvixWebhook(secret) : new StandardWebhook(secret);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    wh.verify(body.toString('utf8'), headers);
    return true;
  } catch {
    return false;
  } finally {
    vi.useRealTimers();
  }
}
const ours = (secret: string, req: ReceivedRequest, body: Buffer | string = req.rawBody) =>
  verifyWebhook(body, req.headers, secret, Math.floor(clock.now().getTime() / 1000));
/** Every verifier a receiver may use: the published one (X-Service-Signature) and both official libraries. */
const acceptedBy = (secret: string, req: ReceivedRequest) => [
  ours(secret, req),
  officialVerify('standardwebhooks', secret, req),
  officialVerify('svix', secret, req),
];

describe('Standard Webhooks headers', () => {
  it('lets the official standardwebhooks and svix libraries verify real deliveries, and fail tampered ones', async () => {
    const { secret, subscriptionId } = await subscribe('/std');
    const req = await deliverOne('/std');
    const [delivery] = await t.db.prisma.webhookDelivery.findMany({ where: { subscriptionId } });
    expect(req.headers['webhook-id']).toBe(delivery.id);
    expect(req.json.id).toBe(delivery.id);
    expect(req.json.eventId).toBe(delivery.eventId);
    expect(req.headers['webhook-timestamp']).toBe(req.headers['x-service-timestamp']);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(acceptedBy(secret, req)).toEqual([true, true, true]);

    const tampered = Buffer.from(req.rawBody.toString('utf8').replace('"asset.created"', '"asset.updated"'));
    expect(tampered.equals(req.rawBody)).toBe(false);
    expect(officialVerify('standardwebhooks', secret, req, tampered)).toBe(false);
    expect(officialVerify('svix', secret, req, tampered)).toBe(false);
    expect(ours(secret, req, tampered)).toBe(false);
    // Another subscription's secret, and a changed webhook-id, fail too.
    const stranger = (await subscribe('/std-other')).secret;
    expect(officialVerify('standardwebhooks', stranger, req)).toBe(false);
    const otherId = { ...req, headers: { ...req.headers, 'webhook-id': `${delivery.id}x` } };
    expect(officialVerify('svix', secret, otherId)).toBe(false);
  });

  it('signs the test call the same way', async () => {
    const { secret, subscriptionId } = await subscribe('/std-test');
    const res = await t.api.post(`/api/v1/webhooks/${subscriptionId}/test`, acme.key);
    expect(res.json()).toMatchObject({ ok: true, delivered: true });
    const [req] = at('/std-test');
    expect(req.headers['x-service-test']).toBe('1');
    expect(req.headers['webhook-id']).toBe(req.json.id);
    expect(req.json.eventId).toMatch(/^test_/);
    expect(acceptedBy(secret, req)).toEqual([true, true, true]);
  });

  it('keeps signing with secrets issued before the format change (base64url), decoded the same way', async () => {
    const { subscriptionId } = await subscribe('/legacy-secret');
    const legacy = `whsec_${Buffer.from('\xfb\xff'.repeat(16), 'latin1').toString('base64url')}`;
    expect(legacy).toMatch(/[-_]/);
    await t.db.prisma.webhookSubscription.update({ where: { id: subscriptionId }, data: { secret: legacy } });
    const req = await deliverOne('/legacy-secret');
    expect(ours(legacy, req)).toBe(true);
    const key = Buffer.from(legacy.slice(6), 'base64url');
    const expected = createHmac('sha256', key)
      .update(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.`)
      .update(req.rawBody)
      .digest('base64');
    expect(req.headers['webhook-signature']).toBe(`v1,${expected}`);
  });
});

describe('POST /webhooks/{id}/rotate-secret', () => {
  it('signs every delivery of the overlap with both secrets, then only with the new one', async () => {
    const { secret: oldSecret, subscriptionId } = await subscribe('/rotating');
    const res = await rotate(subscriptionId, { overlapSeconds: 3600 });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const newSecret: string = body.secret;
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSecret).not.toBe(oldSecret);
    expect(body).toMatchObject({ ok: true, subscriptionId });
    expect(new Date(body.previousSecretExpiresAt).getTime() - new Date(body.rotatedAt).getTime()).toBe(3600_000);
    expect(body.secretWarning).toMatch(/only this once/);
    const detail = (await t.api.get(`/api/v1/webhooks/${subscriptionId}`, acme.key)).json();
    expect(detail.webhook.previousSecretExpiresAt).toBe(body.previousSecretExpiresAt);
    expect(JSON.stringify(detail)).not.toContain('whsec_');

    // During the overlap: a receiver still on the old secret and one already on the new one both accept
    // (each request verified at the time it was sent; the clock moves to just before the overlap ends).
    const bothAccept = (req: ReceivedRequest) => {
      expect(String(req.headers['x-service-signature']).split(' ')).toHaveLength(2);
      expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(acceptedBy(oldSecret, req)).toEqual([true, true, true]);
      expect(acceptedBy(newSecret, req)).toEqual([true, true, true]);
    };
    for (const offset of [0, 1800_000, 3590_000]) {
      offsetMs = offset;
      bothAccept(await deliverOne('/rotating'));
      const testCall = await t.api.post(`/api/v1/webhooks/${subscriptionId}/test`, acme.key);
      expect(testCall.json().signaturePreview).toMatch(/^v1=[0-9a-f]{64} v1=[0-9a-f]{64}$/);
      bothAccept(at('/rotating').at(-1)!);
    }

    // After the overlap only the new secret verifies; the header is the seed's single v1= value again.
    offsetMs = 3601_000;
    const after = await deliverOne('/rotating');
    expect(after.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(after.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(acceptedBy(newSecret, after)).toEqual([true, true, true]);
    expect(acceptedBy(oldSecret, after)).toEqual([false, false, false]);
    offsetMs = 0;
  });

  it('defaults to a 24 h overlap, retires the old secret at once with 0, and keeps the history', async () => {
    const { secret: first, subscriptionId } = await subscribe('/rotate-defaults');
    await deliverOne('/rotate-defaults');
    const byDefault = (await rotate(subscriptionId)).json();
    expect(new Date(byDefault.previousSecretExpiresAt).getTime() - new Date(byDefault.rotatedAt).getTime()).toBe(
      86_400_000,
    );
    const now = (await rotate(subscriptionId, { overlapSeconds: 0 })).json();
    expect(now.previousSecretExpiresAt).toBeNull();
    const req = await deliverOne('/rotate-defaults');
    expect(acceptedBy(now.secret, req)).toEqual([true, true, true]);
    expect(acceptedBy(byDefault.secret, req)).toEqual([false, false, false]);
    expect(acceptedBy(first, req)).toEqual([false, false, false]);
    const history = (await t.api.get(`/api/v1/webhooks/${subscriptionId}/deliveries`, acme.key)).json();
    expect(history.deliveries).toHaveLength(2);
  });

  it('overlaps only with the secret it replaces when rotated again during an overlap', async () => {
    const { secret: a, subscriptionId } = await subscribe('/rotate-twice');
    const b = (await rotate(subscriptionId, { overlapSeconds: 600 })).json().secret;
    const c = (await rotate(subscriptionId, { overlapSeconds: 600 })).json().secret;
    const req = await deliverOne('/rotate-twice');
    expect(acceptedBy(c, req)).toEqual([true, true, true]);
    expect(acceptedBy(b, req)).toEqual([true, true, true]);
    expect(acceptedBy(a, req)).toEqual([false, false, false]);
  });

  it.each([
    [{ overlapSeconds: 604_801 }, 'must be at most 604800 (7 days)'],
    [{ overlapSeconds: -1 }, undefined],
    [{ overlapSeconds: 1.5 }, undefined],
    [{ overlapSeconds: '60' }, undefined],
  ])('answers 422 for %j and keeps the secret', async (input, message) => {
    const { subscriptionId } = await subscribe('/rotate-bad');
    const before = await t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: subscriptionId } });
    const res = await rotate(subscriptionId, input);
    expect(res.statusCode).toBe(422);
    expect(res.json().fieldErrors.overlapSeconds).toEqual(message ?? expect.any(String));
    const after = await t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: subscriptionId } });
    expect(after.secret).toBe(before.secret);
    expect(after.previousSecret).toBeNull();
  });

  it("answers 404 for an unknown id and another organisation's subscription", async () => {
    expect((await rotate('nope')).statusCode).toBe(404);
    const before = await t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: foreignId } });
    expect((await rotate(foreignId)).statusCode).toBe(404);
    const after = await t.db.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: foreignId } });
    expect(after.secret).toBe(before.secret);
  });
});

securitySuite('webhook secret rotation', () => ({ t, tenant: acme }), [
  {
    label: 'POST /webhooks/:id/rotate-secret',
    method: 'POST',
    path: () => `/api/v1/webhooks/${foreignId}/rotate-secret`,
    scope: 'events:write',
    body: {},
    crossTenant: true,
  },
]);
